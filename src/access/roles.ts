export const Role = { user: 1, admin: 10, root: 100 } as const;
export const Status = { enabled: 1, disabled: 2 } as const;
export const KeyStatus = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;

export function roleName(role: number): string {
  return role >= Role.root ? 'root' : role >= Role.admin ? 'admin' : 'user';
}
