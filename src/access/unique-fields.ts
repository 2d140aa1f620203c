import { conflict, type GatewayError } from '../gateway/errors.js';
import type { UserRow, UsersRepo } from '../store/users-repo.js';

/** The fields of a user write that must be no other user's: a username, an email (set). */
export interface UniqueWrite {
  username?: string;
  email?: string;
}

/** What a start says about users made before a field was unique: `log` for the structured line. */
export interface DuplicatesWarning {
  log: Record<string, string[]>;
  message: string;
}

/**
 * Usernames and emails are unique ignoring letter case (docs/architecture.md, "Accounts and
 * roles"). The database holds the rule (unique indexes, migrations 0005 and 0006), so two
 * instances writing the same name or address at once cannot both succeed; the look-ups here are
 * for the 409's message and for the users that already shared one before (marked outside the
 * indexes, which can only go away, never appear, so looking them up before a write is not racy).
 */
export class UniqueFields {
  constructor(private readonly users: UsersRepo) {}

  /**
   * A 409 naming the field when what `fields` writes is another user's than `exceptId`'s.
   * `naming`: the message names the user holding it (an admin's write); a user's own profile
   * is only told that another user has the address.
   */
  async refuseTaken(fields: UniqueWrite, exceptId: number | undefined, naming: boolean): Promise<void> {
    const taken = await this.takenBy(fields, exceptId, naming);
    if (taken) throw taken;
  }

  /** The 409 for a write a unique index refused, naming the field (and holder) when it can be read. */
  async conflict(fields: UniqueWrite, exceptId: number | undefined, naming: boolean): Promise<GatewayError> {
    const taken = await this.takenBy(fields, exceptId, naming).catch(() => undefined);
    if (taken) return taken;
    const names = Object.keys(fields).filter((k) => fields[k as keyof UniqueWrite] !== undefined);
    return conflict(`${names.join(' or ')}: taken by another user`);
  }

  private async takenBy(
    fields: UniqueWrite,
    exceptId: number | undefined,
    naming: boolean,
  ): Promise<GatewayError | undefined> {
    if (fields.username !== undefined) {
      const twin = await this.users.caseTwin(fields.username, exceptId);
      if (twin) return usernameTaken(fields.username, twin);
    }
    if (fields.email !== undefined) {
      const twin = await this.users.emailTwin(fields.email, exceptId);
      if (twin) return emailTaken(fields.email, twin, naming);
    }
    return undefined;
  }

  /**
   * What a start says about users made before these fields were unique: usernames that differ
   * only in case (migration 0005), emails that another user has too (0006), kept as they were
   * rather than merged, renamed or cleared behind their owners' backs. Empty when there are none.
   */
  async duplicatesWarnings(): Promise<DuplicatesWarning[]> {
    const [names, emails] = await Promise.all([this.users.caseDuplicates(), this.users.emailDuplicates()]);
    const out: DuplicatesWarning[] = [];
    if (names.length > 0) {
      const usernames = names.flat().map(described);
      out.push({
        log: { usernames },
        message:
          `users whose usernames differ only in letter case, made before usernames were unique ignoring case: ${usernames.join(', ')}. ` +
          'Each signs in with its exact spelling only; rename (PUT /api/user) or delete all but one of each',
      });
    }
    if (emails.length > 0) {
      // By user, not by address: an address is personal data, which logs are not the place for.
      const groups = emails.map((g) => g.map(described));
      out.push({
        log: { email_users: groups.flat() },
        message:
          `users sharing an email (ignoring case), made before emails were unique: ${groups.map((g) => g.join(' and ')).join('; ')}. ` +
          'Give all but one of each another email, or none (PUT /api/user)',
      });
    }
    return out;
  }
}

const described = (u: UserRow): string => `${u.username} (id ${u.id})`;

/** `alice` for `alice`; for `ALICE`, says which user holds it and why. */
function usernameTaken(username: string, twin: UserRow): GatewayError {
  if (twin.username === username) return conflict(`username: "${username}" is taken`);
  return conflict(
    `username: "${username}" is taken by "${twin.username}" (usernames are unique ignoring case)`,
  );
}

/** Names the user holding the address when `naming` (an admin asked), and why when spelled otherwise. */
function emailTaken(email: string, twin: UserRow, naming: boolean): GatewayError {
  const who = naming ? `user "${twin.username}"` : 'another user';
  const why = twin.email === email ? '' : ' (emails are unique ignoring case)';
  return conflict(`email: "${email}" is taken by ${who}${why}`);
}
