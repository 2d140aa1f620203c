import { conflict, notFound } from '../gateway/errors.js';
import type { AppFilter, AppsRepo } from '../store/apps-repo.js';
import { AppStatus } from './app-fields.js';
import type { AppOrder } from './app-order.js';
import { type AppRecord, toAppRecord } from './app-record.js';
import { type AppInput, normalizeApp } from './normalize-app.js';
import type { SearchTerms } from './search-keyword.js';

/** Who is asking: the public sees published apps only; admins see every status. */
export interface Viewer {
  admin: boolean;
}

export interface Page {
  offset: number;
  limit: number;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

export class CatalogService {
  constructor(private readonly apps: AppsRepo) {}

  private visible(viewer: Viewer, f: AppFilter): AppFilter {
    if (viewer.admin) return f;
    // A public caller asking for another status gets an empty page, not hidden records.
    if (f.status !== undefined && f.status !== AppStatus.published) return { ...f, status: -1 };
    return { ...f, status: AppStatus.published };
  }

  async list(viewer: Viewer, f: AppFilter, order: AppOrder, page: Page) {
    const { rows, total } = await this.apps.list(this.visible(viewer, f), order, page.offset, page.limit);
    return { apps: rows.map(toAppRecord), total };
  }

  async search(viewer: Viewer, terms: SearchTerms, f: AppFilter, page: Page) {
    const { rows, total } = await this.apps.search(terms, this.visible(viewer, f), page.offset, page.limit);
    return { apps: rows.map(toAppRecord), total };
  }

  async get(viewer: Viewer, id: number): Promise<AppRecord> {
    const row = await this.apps.byId(id);
    if (!row || (!viewer.admin && Number(row.status) !== AppStatus.published))
      throw notFound(`app ${id} not found`);
    return toAppRecord(row);
  }

  async download(id: number): Promise<{ download_url: string; download_count: number }> {
    const r = await this.apps.recordDownload(id, AppStatus.published);
    if (r.ok) return { download_url: r.download_url, download_count: r.download_count };
    if (r.reason === 'missing') throw notFound(`app ${id} not found`);
    throw conflict(`app ${id} has no download_url`);
  }

  async create(actorId: number, input: AppInput & { name: string }): Promise<AppRecord> {
    const v = normalizeApp(input);
    const now = nowSeconds();
    const row = await this.apps.insert({
      name: v.name ?? '',
      short_description: v.short_description ?? '',
      description: v.description ?? '',
      category: v.category ?? 'general',
      version: v.version ?? '',
      author: v.author ?? '',
      author_url: v.author_url ?? '',
      thumbnail_url: v.thumbnail_url ?? '',
      download_url: v.download_url ?? '',
      source_url: v.source_url ?? '',
      documentation_url: v.documentation_url ?? '',
      tags: v.tags ?? '',
      status: v.status ?? AppStatus.published,
      featured: v.featured ?? 0,
      created_time: now,
      updated_time: now,
      created_by: actorId,
      updated_by: actorId,
    });
    return toAppRecord(row);
  }

  /** Changes only the fields present; returns the stored record and the changed field names. */
  async update(actorId: number, id: number, input: AppInput): Promise<{ app: AppRecord; fields: string[] }> {
    const v = normalizeApp(input);
    const fields = Object.keys(v);
    const row = await this.apps.update(id, { ...v, updated_time: nowSeconds(), updated_by: actorId });
    if (!row) throw notFound(`app ${id} not found`);
    return { app: toAppRecord(row), fields };
  }

  async delete(id: number): Promise<void> {
    if (!(await this.apps.delete(id))) throw notFound(`app ${id} not found`);
  }
}
