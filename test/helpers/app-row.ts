import type { Insertable } from 'kysely';
import type { AppsTable } from '../../src/store/schema.js';

/** An apps row to insert through AppsRepo, empty but for its name and what `more` sets. */
export const appRow = (name: string, more: Partial<Insertable<AppsTable>> = {}): Insertable<AppsTable> => ({
  name,
  short_description: '',
  description: '',
  category: 'general',
  version: '',
  author: '',
  author_url: '',
  thumbnail_url: '',
  download_url: '',
  source_url: '',
  documentation_url: '',
  tags: '',
  status: 1,
  featured: 0,
  created_time: 1,
  updated_time: 1,
  created_by: 0,
  updated_by: 0,
  ...more,
});
