import { Type } from 'typebox';

/** Shared route schema pieces. */
export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });

export const PageQuery = {
  p: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
};

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);
