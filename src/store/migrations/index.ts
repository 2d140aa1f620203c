import type { Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { init } from './0001-init.js';
import { appSearch } from './0002-app-search.js';
import { writeOnce } from './0003-write-once.js';
import { channelRevision } from './0004-channel-revision.js';
import { usernameCase } from './0005-username-case.js';
import { emailCase } from './0006-email-case.js';
import { keyAdminHold } from './0007-key-admin-hold.js';
import { searchFold } from './0008-search-fold.js';
import { channelListings } from './0009-channel-listings.js';
import { channelListingOutcome } from './0010-channel-listing-outcome.js';
import { userKeyHold } from './0011-user-key-hold.js';
import { searchIgnorable } from './0012-search-ignorable.js';

/**
 * Numbered migrations, applied in order and never edited once released: add a new file
 * and one line here.
 */
export function migrationsFor(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-init': init(dialect),
    '0002-app-search': appSearch(dialect),
    '0003-write-once': writeOnce(),
    '0004-channel-revision': channelRevision(),
    '0005-username-case': usernameCase(),
    '0006-email-case': emailCase(),
    '0007-key-admin-hold': keyAdminHold(),
    '0008-search-fold': searchFold(dialect),
    '0009-channel-listings': channelListings(dialect),
    '0010-channel-listing-outcome': channelListingOutcome(),
    '0011-user-key-hold': userKeyHold(),
    '0012-search-ignorable': searchIgnorable(),
  };
}
