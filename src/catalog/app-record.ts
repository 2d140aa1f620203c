import type { AppRow } from '../store/apps-repo.js';

/**
 * An App as the API returns it (interface.md 2.5): every stored field but the search columns,
 * `featured` as a boolean. Derived from the row, so a column added to the apps' record is a
 * compile error in `toAppRecord` until it is returned.
 */
export type AppRecord = Omit<AppRow, 'featured'> & { featured: boolean };

export function toAppRecord(r: AppRow): AppRecord {
  return {
    id: Number(r.id),
    name: r.name,
    short_description: r.short_description,
    description: r.description,
    category: r.category,
    version: r.version,
    author: r.author,
    author_url: r.author_url,
    thumbnail_url: r.thumbnail_url,
    download_url: r.download_url,
    source_url: r.source_url,
    documentation_url: r.documentation_url,
    tags: r.tags,
    status: Number(r.status),
    featured: Number(r.featured) === 1,
    download_count: Number(r.download_count),
    created_time: Number(r.created_time),
    updated_time: Number(r.updated_time),
    created_by: Number(r.created_by),
    updated_by: Number(r.updated_by),
  };
}
