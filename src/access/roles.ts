export const Role = { user: 1, admin: 10, root: 100 } as const;
export const Status = { enabled: 1, disabled: 2 } as const;
export const KeyStatus = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;

export function roleName(role: number): string {
  return role >= Role.root ? 'root' : role >= Role.admin ? 'admin' : 'user';
}

/**
 * The role a user `actor` manages must stay below, checked again by the write itself (usersRepo's
 * `below`, so a target promoted meanwhile is not overwritten): an admin's own role; none for a
 * root, who manages anyone. The write-time twin of `outranks`.
 */
export function rankToStayBelow(actor: { role: number }): number | undefined {
  return actor.role < Role.root ? actor.role : undefined;
}

/** Whether `actor` may manage `target` (a root: anyone; else users of a lower role). */
export function outranks(actor: { role: number }, target: { role: number }): boolean {
  return actor.role >= Role.root || target.role < actor.role;
}
