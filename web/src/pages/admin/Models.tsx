import { useEffect, useRef, useState } from 'react';
import { ApiError, api } from '../../api';
import { type FormValues, SpecForm, str } from '../../components/SpecForm';
import {
  Confirm,
  Empty,
  ErrorBox,
  Modal,
  Notice,
  Pager,
  RowAction,
  Spinner,
  TableWrap,
} from '../../components/ui';
import { formatNumber, perMillion } from '../../format';
import { useAsync, useDocumentTitle } from '../../hooks';
import type { ModelEntry } from '../../types';
import { createBody, editBody, fields, filledIn, ORIGIN, toValues } from './models/model-form';

const PAGE_SIZE = 50;

const modelPath = (id: string) => `/model/${id.split('/').map(encodeURIComponent).join('/')}`;

/** The model with exactly this id, or null when the registry has none. */
async function knownModel(id: string): Promise<ModelEntry | null> {
  try {
    const m = await api.get<ModelEntry>(modelPath(id));
    // A plain name answers with the model it names; only the same id is the same model.
    return m.id === id ? m : null;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

/** An edited model with something below the admin's changes: Delete takes it back to that. */
const resettable = (m: ModelEntry) => !!m.overridden && !!m.base_source;
/** A model's modalities for its row; a list stored empty (before the API refused it) is "none", as the API lists it. */
const modalities = (list: string[] | null) => (list ? list.join('+') || 'none' : 'text');

export function Models() {
  useDocumentTitle('Models');
  const [page, setPage] = useState(0);
  const [search, setSearch] = useState('');
  const [q, setQ] = useState('');
  // The answer carries the search it answers: while another loads, the old rows stay (busy), and
  // what is said of them is said of their search, not of the one typed since.
  const list = useAsync(
    async () => ({ q, ...(await api.page<ModelEntry>('/model', { p: page, page_size: PAGE_SIZE, q })) }),
    [page, q],
  );
  const shownQ = list.data?.q ?? '';
  const [editing, setEditing] = useState<ModelEntry | 'new' | null>(null);
  /** What a "New model" form filled in for an id the registry has, kept for that model's edit form. */
  const [known, setKnown] = useState<{ model: ModelEntry; values: FormValues } | null>(null);
  const [carried, setCarried] = useState<FormValues>({});
  const [deleting, setDeleting] = useState<ModelEntry | null>(null);
  const [notice, setNotice] = useState('');
  const current = editing === 'new' ? undefined : (editing ?? undefined);
  const deletingOrigin = deleting && resettable(deleting) ? ORIGIN[deleting.base_source!] : undefined;
  const knownOrigin = (known?.model.base_source && ORIGIN[known.model.base_source]?.known) || 'added before';
  // Said at the top of a long form whose button is at the bottom: the dialog scrolls back up
  // (scrolled into view, it stayed under the dialog's sticky header).
  const knownRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (known) knownRef.current?.closest('dialog')?.scrollTo({ top: 0 });
  }, [known]);

  function open(to: ModelEntry | 'new' | null, values: FormValues = {}) {
    setKnown(null);
    setCarried(values);
    setEditing(to);
  }

  async function save(v: FormValues) {
    setNotice('');
    setKnown(null);
    if (current) {
      await api.put('/model', editBody(v, current));
      setNotice(`Saved model ${current.id}.`);
    } else {
      // An id the registry has (built in, configured, listed, added before) is edited, never
      // created over: the form offers its edit form, with what was filled in.
      const id = str(v.id);
      const m = await knownModel(id);
      if (m) {
        setKnown({ model: m, values: filledIn(v) });
        return;
      }
      await api.post('/model', createBody(v));
      setNotice(`Saved model ${id}.`);
    }
    open(null);
    list.reload();
  }

  async function remove() {
    setNotice('');
    if (!deleting) return;
    await api.del(modelPath(deleting.id));
    setNotice(
      deletingOrigin
        ? `Reset model ${deleting.id} ${deletingOrigin.notice}.`
        : `Deleted model ${deleting.id}.`,
    );
    setDeleting(null);
    list.reload();
  }

  return (
    <>
      <div className="page-head">
        <h1>Models</h1>
        <button type="button" className="btn btn-primary" onClick={() => open('new')}>
          New model
        </button>
      </div>
      <p className="meta">The registry behind /v1/models: limits and prices used for validation and cost.</p>
      <form
        className="toolbar"
        aria-label="Find models"
        onSubmit={(e) => {
          e.preventDefault();
          setPage(0);
          setQ(search.trim());
        }}
      >
        <div className="field field-inline">
          <label htmlFor="model-filter">Find</label>
          <input
            id="model-filter"
            type="search"
            placeholder="id or name"
            maxLength={100}
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
        </div>
        <button type="submit" className="btn">
          Find
        </button>
        {list.loading && list.data ? (
          <span className="meta" role="status">
            {q ? `Searching for “${q}”…` : 'Loading…'}
          </span>
        ) : (
          list.data && (
            <span className="meta">
              {list.data.total} {list.data.total === 1 ? 'model' : 'models'}
              {shownQ ? ` matching “${shownQ}”` : ''}
            </span>
          )
        )}
      </form>
      <Notice>{notice}</Notice>
      {list.loading && !list.data && <Spinner />}
      <ErrorBox error={list.error} onRetry={list.reload} />
      {list.data?.total === 0 &&
        (shownQ ? (
          <Empty title="No model matches">Try part of an id, such as “gpt” or “claude”.</Empty>
        ) : (
          <Empty title="No models registered">Add the models your upstreams serve.</Empty>
        ))}
      {!!list.data?.items.length && (
        <TableWrap caption="Registered models" busy={list.loading}>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Context</th>
              <th scope="col">Prompt</th>
              <th scope="col">Completion</th>
              <th scope="col">Modalities</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((m) => (
              <tr key={m.id}>
                <th scope="row">
                  {m.name}
                  <div className="meta mono">
                    {m.id}
                    {m.base_source && (
                      <span className="badge badge-muted">{ORIGIN[m.base_source]?.badge}</span>
                    )}
                    {m.overridden && m.base_source && (
                      <span className="badge badge-muted" title="Changed here: Reset to defaults undoes it">
                        edited
                      </span>
                    )}
                  </div>
                </th>
                <td>{formatNumber(m.context_length)}</td>
                <td>{perMillion(m.pricing?.prompt)}</td>
                <td>{perMillion(m.pricing?.completion)}</td>
                <td>
                  {modalities(m.input_modalities)} → {modalities(m.output_modalities)}
                </td>
                <td className="actions">
                  <RowAction verb="Edit" of={m.name} onClick={() => open(m)} />
                  {/* Untouched (no admin entry): nothing to delete, the server would answer 404. */}
                  {resettable(m) ? (
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-label={`Reset ${m.name} to defaults`}
                      onClick={() => setDeleting(m)}
                    >
                      Reset to defaults
                    </button>
                  ) : (
                    m.overridden !== false && (
                      <RowAction verb="Delete" of={m.name} danger onClick={() => setDeleting(m)} />
                    )
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </TableWrap>
      )}
      {list.data && <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total} onPage={setPage} />}
      <Modal
        title={current ? `Edit ${current.id}` : 'New model'}
        open={editing !== null}
        onClose={() => open(null)}
        wide
      >
        {known && (
          <div ref={knownRef} className="alert alert-warn" role="alert">
            <span>{`${known.model.id} is already a model (${knownOrigin}): edit it to change what you filled in.`}</span>
            <button type="button" className="btn btn-small" onClick={() => open(known.model, known.values)}>
              Edit {known.model.id}
            </button>
          </div>
        )}
        {editing !== null && (
          <SpecForm
            key={current?.id ?? 'new'}
            fields={fields(!current, current)}
            initial={{ ...toValues(current), ...carried }}
            submitLabel={current ? 'Save changes' : 'Create model'}
            onSubmit={save}
            onCancel={() => open(null)}
          />
        )}
      </Modal>
      <Confirm
        open={deleting !== null}
        title={deletingOrigin ? 'Reset model to defaults?' : 'Delete model?'}
        message={
          deletingOrigin
            ? `Your changes to ${deleting?.id} are removed: its name, prices, limits and modalities ${deletingOrigin.reset}`
            : `${deleting?.id ?? ''} will disappear from /v1/models.`
        }
        confirmLabel={deletingOrigin ? 'Reset to defaults' : 'Delete'}
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      />
    </>
  );
}
