import { Type } from 'typebox';
import { CATEGORIES, type Category, TEXT_LIMITS } from '../../catalog/app-fields.js';
import { MAX_KEYWORD_LENGTH } from '../../catalog/search-keyword.js';
import { PageQuery, RowId } from '../schemas.js';

/** `{enum}` rather than a union of literals, so a bad value reads "must be one of ...". */
export const CategoryValue = Type.Unsafe<Category>({ type: 'string', enum: [...CATEGORIES] });

const UrlValue = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const Ignored = Type.Optional(Type.Unknown());

const AppFields = {
  short_description: Type.Optional(Type.String({ maxLength: TEXT_LIMITS.short_description })),
  description: Type.Optional(Type.String({ maxLength: TEXT_LIMITS.description })),
  category: Type.Optional(CategoryValue),
  version: Type.Optional(Type.String({ maxLength: TEXT_LIMITS.version })),
  author: Type.Optional(Type.String({ maxLength: TEXT_LIMITS.author })),
  author_url: UrlValue,
  thumbnail_url: UrlValue,
  download_url: UrlValue,
  source_url: UrlValue,
  documentation_url: UrlValue,
  tags: Type.Optional(
    Type.Union([Type.String({ maxLength: 4096 }), Type.Array(Type.String(), { maxItems: 100 }), Type.Null()]),
  ),
  status: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 })),
  featured: Type.Optional(Type.Boolean()),
  // Server-owned: accepted so a fetched record can be sent back, then ignored.
  download_count: Ignored,
  created_time: Ignored,
  updated_time: Ignored,
  created_by: Ignored,
  updated_by: Ignored,
};

const Name = Type.String({ minLength: 1, maxLength: TEXT_LIMITS.name });

/** `id` is ignored on create (the server assigns it), so a fetched record can be cloned. */
export const CreateAppBody = Type.Object(
  { ...AppFields, name: Name, id: Ignored },
  { additionalProperties: false },
);

export const UpdateAppBody = Type.Object(
  { ...AppFields, id: RowId, name: Type.Optional(Name) },
  { additionalProperties: false },
);

const Order = Type.Optional(Type.String({ maxLength: 64 }));

export const ListQuery = Type.Object({
  ...PageQuery,
  category: Type.Optional(CategoryValue),
  order: Order,
  featured: Type.Optional(Type.Boolean()),
  status: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 })),
});

export const SearchQuery = Type.Object({
  ...PageQuery,
  keyword: Type.String({ maxLength: MAX_KEYWORD_LENGTH }),
  category: Type.Optional(CategoryValue),
  status: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 })),
});

export const SubsetQuery = Type.Object({
  ...PageQuery,
  order: Order,
  status: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 })),
});

export const CategoryParams = Type.Object({ category: CategoryValue });
