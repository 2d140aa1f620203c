import type { AppRow } from '../store/apps-repo.js';

/** An App as the API returns it (interface.md 2.5): every field, `featured` as a boolean. */
export interface AppRecord {
  id: number;
  name: string;
  short_description: string;
  description: string;
  category: string;
  version: string;
  author: string;
  author_url: string;
  thumbnail_url: string;
  download_url: string;
  source_url: string;
  documentation_url: string;
  tags: string;
  status: number;
  featured: boolean;
  download_count: number;
  created_time: number;
  updated_time: number;
  created_by: number;
  updated_by: number;
}

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
