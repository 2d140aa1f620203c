import { type FormEvent, useState } from 'react';
import { MAX_TAGS } from '../../../src/catalog/app-fields';
import { ApiError, errorText, fieldMessage } from '../api';
import { tagsProblem } from '../app-tags';
import { NAME_MAX, textRuleProblem } from '../field-rules';
import { categoryLabel } from '../format';
import { type App, CATEGORIES } from '../types';
import { ErrorBox, Field } from './ui';

/**
 * The most characters each text field takes, as the catalog stores them (code points, which
 * maxLength on an input would count as UTF-16 units): an entry past it is said under its field
 * before anything is sent, never cut short unseen.
 */
const MAX_CHARS: Record<string, number> = {
  name: NAME_MAX,
  short_description: 512,
  description: 20_000,
  version: 64,
  author: 128,
  author_url: 2048,
  thumbnail_url: 2048,
  download_url: 2048,
  source_url: 2048,
  documentation_url: 2048,
};

const TEXT_FIELDS = [
  ['name', 'Name'],
  ['short_description', 'Short description'],
  ['version', 'Version'],
  ['author', 'Author'],
] as const;

const URL_FIELDS = [
  ['author_url', 'Author URL'],
  ['thumbnail_url', 'Thumbnail URL'],
  ['download_url', 'Download URL'],
  ['source_url', 'Source URL'],
  ['documentation_url', 'Documentation URL'],
] as const;

/**
 * Why a link field's entry would be refused, in the words of the catalog's rule (an absolute
 * http or https URL, no credentials, no spaces: src/catalog/normalize-app.ts), or null. Checked
 * on every link field before sending: the server names one field per answer, so a form with
 * three bad links took three tries to hear of them all.
 */
function urlProblem(value: string): string | null {
  const v = value.trim();
  if (!v) return null;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(v)?.[1];
  if (scheme && !/^https?$/i.test(scheme)) return `Must use http or https, not ${scheme.toLowerCase()}.`;
  const absolute = 'Must be an absolute http or https URL (https://host/…).';
  if (!/^https?:\/\/[^/]/i.test(v)) return absolute;
  if (/[\s\p{Cc}\p{Cf}]/u.test(v)) return 'Must not contain spaces or invisible characters.';
  if (v.includes('\\')) return 'Must not contain backslashes.';
  if (!URL.canParse(v)) return absolute;
  const authority = v.slice(v.indexOf('//') + 2).split(/[/?#]/, 1)[0];
  if (authority.includes('@')) return 'Must not contain credentials (a user name or password).';
  return null;
}

type Values = {
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
};

const FIELD_NAMES = new Set<string>([
  ...TEXT_FIELDS.map((f) => f[0]),
  ...URL_FIELDS.map((f) => f[0]),
  'description',
  'category',
  'tags',
  'status',
  'featured',
]);

function initial(app?: App | null): Values {
  return {
    name: app?.name ?? '',
    short_description: app?.short_description ?? '',
    description: app?.description ?? '',
    category: app?.category ?? 'general',
    version: app?.version ?? '',
    author: app?.author ?? '',
    author_url: app?.author_url ?? '',
    thumbnail_url: app?.thumbnail_url ?? '',
    download_url: app?.download_url ?? '',
    source_url: app?.source_url ?? '',
    documentation_url: app?.documentation_url ?? '',
    tags: app?.tags ?? '',
    status: app?.status ?? 1,
    featured: app?.featured ?? false,
  };
}

/** The body to send: on create, only filled fields; on update, only changed fields plus id. */
function body(values: Values, app?: App | null): Record<string, unknown> {
  const start = initial(app);
  const out: Record<string, unknown> = app ? { id: app.id } : {};
  for (const [k, v] of Object.entries(values) as [keyof Values, Values[keyof Values]][]) {
    const value = typeof v === 'string' ? v.trim() : v;
    if (app) {
      if (value !== (typeof start[k] === 'string' ? (start[k] as string).trim() : start[k])) out[k] = value;
    } else if (value !== '') out[k] = value;
  }
  return out;
}

export function AppForm({
  app,
  onSave,
  onCancel,
}: {
  app?: App | null;
  onSave(body: Record<string, unknown>): Promise<void>;
  onCancel(): void;
}) {
  const [values, setValues] = useState<Values>(() => initial(app));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  function set<K extends keyof Values>(k: K, v: Values[K]) {
    setValues((s) => ({ ...s, [k]: v }));
    setErrors((e) => {
      if (!e[k]) return e;
      const { [k]: _, ...rest } = e;
      return rest;
    });
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    const found: Record<string, string> = {};
    if (!values.name.trim()) found.name = 'Name is required.';
    for (const [k, max] of Object.entries(MAX_CHARS)) {
      const why = textRuleProblem(String(values[k as keyof Values]).trim(), { maxLength: max });
      if (why) found[k] = why;
    }
    // Tags as stored are not judged again, as links are not (an edit sends only what changed).
    if (!(app && values.tags.trim() === initial(app).tags.trim())) {
      const why = tagsProblem(values.tags);
      if (why) found.tags = why;
    }
    // A link as stored is not judged again (an edit sends only what changed).
    const stored = app ? initial(app) : null;
    for (const [k] of URL_FIELDS) {
      if (found[k] || (stored && values[k].trim() === stored[k].trim())) continue;
      const why = urlProblem(values[k]);
      if (why) found[k] = why;
    }
    if (Object.keys(found).length) {
      setErrors(found);
      setFormError(
        Object.keys(found).length === 1
          ? 'Please correct the highlighted field.'
          : 'Please correct the highlighted fields.',
      );
      document.getElementsByName(Object.keys(found)[0])[0]?.focus();
      return;
    }
    setBusy(true);
    setFormError(null);
    setErrors({});
    try {
      await onSave(body(values, app));
    } catch (err) {
      const path = err instanceof ApiError ? err.field : null;
      // Exact names first: "author_url" must not land on "author".
      const field = path
        ? FIELD_NAMES.has(path)
          ? path
          : [...FIELD_NAMES].find((f) => path.startsWith(`${f}_`))
        : undefined;
      if (field) {
        setErrors({ [field]: fieldMessage(errorText(err)) });
        setFormError('Please correct the highlighted field.');
        document.getElementsByName(field)[0]?.focus();
      } else setFormError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="form form-grid" onSubmit={submit} noValidate>
      {TEXT_FIELDS.map(([k, label]) => (
        <Field key={k} label={k === 'name' ? `${label} (required)` : label} error={errors[k]}>
          {(p) => <input {...p} name={k} value={values[k]} onChange={(e) => set(k, e.target.value)} />}
        </Field>
      ))}
      <Field label="Category" error={errors.category}>
        {(p) => (
          <select
            {...p}
            name="category"
            value={values.category}
            onChange={(e) => set('category', e.target.value)}
          >
            {CATEGORIES.map((c) => (
              <option key={c} value={c}>
                {categoryLabel(c)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Tags" hint={`Comma-separated, at most ${MAX_TAGS}.`} error={errors.tags}>
        {(p) => (
          <input {...p} name="tags" value={values.tags} onChange={(e) => set('tags', e.target.value)} />
        )}
      </Field>
      <Field label="Description" error={errors.description} className="span-2">
        {(p) => (
          <textarea
            {...p}
            name="description"
            rows={5}
            value={values.description}
            onChange={(e) => set('description', e.target.value)}
          />
        )}
      </Field>
      {URL_FIELDS.map(([k, label]) => (
        <Field key={k} label={label} error={errors[k]}>
          {(p) => (
            <input
              {...p}
              name={k}
              type="url"
              inputMode="url"
              placeholder="https://"
              value={values[k]}
              onChange={(e) => set(k, e.target.value)}
            />
          )}
        </Field>
      ))}
      <Field label="Visibility" error={errors.status}>
        {(p) => (
          <select
            {...p}
            name="status"
            value={values.status}
            onChange={(e) => set('status', Number(e.target.value))}
          >
            <option value={1}>Published</option>
            <option value={2}>Hidden</option>
          </select>
        )}
      </Field>
      <div className="field field-check">
        <input
          id="app-featured"
          name="featured"
          type="checkbox"
          checked={values.featured}
          onChange={(e) => set('featured', e.target.checked)}
        />
        <label htmlFor="app-featured">Featured on the home page</label>
      </div>
      <div className="span-2" aria-live="assertive">
        <ErrorBox error={formError} />
      </div>
      <div className="form-actions span-2">
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Saving…' : app ? 'Save changes' : 'Create app'}
        </button>
      </div>
    </form>
  );
}
