import { useState } from 'react';
import { api } from '../../api';
import { type FieldSpec, type FormValues, numOrNull, SpecForm, str } from '../../components/SpecForm';
import { Confirm, Empty, ErrorBox, Modal, Notice, Pager, Spinner } from '../../components/ui';
import { formatNumber, perMillion, splitList } from '../../format';
import { useAsync, useDocumentTitle } from '../../hooks';
import type { ModelEntry } from '../../types';

const PAGE_SIZE = 50;

function fields(creating: boolean): FieldSpec[] {
  const list: FieldSpec[] = [
    { name: 'name', label: 'Display name', required: true },
    {
      name: 'upstream_model',
      label: 'Upstream model',
      hint: 'Name sent upstream, when it differs from the id. Empty: the default.',
    },
    {
      name: 'context_length',
      label: 'Context length (tokens)',
      type: 'number',
      min: 1,
      hint: 'Empty: the default (the config file or built-in list, else 8,192).',
    },
    { name: 'max_completion_tokens', label: 'Max completion tokens', type: 'number', min: 1 },
    { name: 'pricing_prompt', label: 'Prompt price (USD per token)', placeholder: '0.000003' },
    { name: 'pricing_completion', label: 'Completion price (USD per token)', placeholder: '0.000015' },
    { name: 'pricing_request', label: 'Price per request (USD)', placeholder: '0' },
    { name: 'pricing_image', label: 'Price per image (USD)', placeholder: '0' },
    { name: 'input_modalities', label: 'Input modalities', placeholder: 'text, image' },
    { name: 'output_modalities', label: 'Output modalities', placeholder: 'text' },
    {
      name: 'supported_parameters',
      label: 'Supported parameters',
      wide: true,
      placeholder: 'temperature, top_p, max_tokens, tools',
    },
  ];
  if (creating)
    list.unshift({ name: 'id', label: 'Model id', required: true, placeholder: 'openai/gpt-4o-mini' });
  return list;
}

function toValues(m?: ModelEntry): FormValues {
  return {
    id: m?.id ?? '',
    name: m?.name ?? '',
    upstream_model: m?.upstream_model ?? '',
    context_length: m?.context_length ? String(m.context_length) : '',
    max_completion_tokens: m?.max_completion_tokens ? String(m.max_completion_tokens) : '',
    pricing_prompt: m?.pricing?.prompt ?? '',
    pricing_completion: m?.pricing?.completion ?? '',
    pricing_request: m?.pricing?.request ?? '',
    pricing_image: m?.pricing?.image ?? '',
    input_modalities: (m?.input_modalities ?? ['text']).join(', '),
    output_modalities: (m?.output_modalities ?? ['text']).join(', '),
    supported_parameters: (m?.supported_parameters ?? []).join(', '),
  };
}

function toBody(v: FormValues, m?: ModelEntry): Record<string, unknown> {
  const pricing: Record<string, string> = {};
  for (const k of ['prompt', 'completion', 'request', 'image']) {
    const p = str(v[`pricing_${k}`]);
    pricing[k] = p || '0';
  }
  const body: Record<string, unknown> = {
    id: m ? m.id : str(v.id),
    name: str(v.name),
    max_completion_tokens: numOrNull(v.max_completion_tokens),
    pricing,
    input_modalities: splitList(str(v.input_modalities)),
    output_modalities: splitList(str(v.output_modalities)),
    supported_parameters: splitList(str(v.supported_parameters)),
  };
  // Fields with a default below the admin's entry: sent when new or changed, so an untouched
  // default is not pinned; a cleared one is null, which the server takes as "back to the default"
  // (left out, the PUT kept the old value).
  const start = toValues(m);
  const changed = (k: string) => !m || str(v[k]) !== str(start[k]);
  if (changed('upstream_model')) body.upstream_model = str(v.upstream_model) || null;
  if (changed('context_length')) body.context_length = numOrNull(v.context_length);
  // The other fields too go only when changed: sent as they were, they pinned the model's current
  // values in the admin's entry (a built-in model renamed kept today's prices over later
  // defaults), and put back what another administrator changed while the form was open.
  if (m) {
    for (const k of [
      'name',
      'max_completion_tokens',
      'input_modalities',
      'output_modalities',
      'supported_parameters',
    ])
      if (!changed(k)) delete body[k];
    if (!['prompt', 'completion', 'request', 'image'].some((k) => changed(`pricing_${k}`)))
      delete body.pricing;
  }
  return body;
}

export function Models() {
  useDocumentTitle('Models');
  const [page, setPage] = useState(0);
  const [search, setSearch] = useState('');
  const [q, setQ] = useState('');
  const list = useAsync(
    () => api.page<ModelEntry>('/model', { p: page, page_size: PAGE_SIZE, q }),
    [page, q],
  );
  const [editing, setEditing] = useState<ModelEntry | 'new' | null>(null);
  const [deleting, setDeleting] = useState<ModelEntry | null>(null);
  const [notice, setNotice] = useState('');
  const current = editing === 'new' ? undefined : (editing ?? undefined);

  async function save(v: FormValues) {
    setNotice('');
    const body = toBody(v, current);
    if (current) await api.put('/model', body);
    else await api.post('/model', body);
    setNotice(`Saved model ${body.id}.`);
    setEditing(null);
    list.reload();
  }

  async function remove() {
    setNotice('');
    if (!deleting) return;
    await api.del(`/model/${deleting.id.split('/').map(encodeURIComponent).join('/')}`);
    setNotice(`Deleted model ${deleting.id}.`);
    setDeleting(null);
    list.reload();
  }

  return (
    <>
      <div className="page-head">
        <h1>Models</h1>
        <button type="button" className="btn btn-primary" onClick={() => setEditing('new')}>
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
        {list.data && (
          <span className="meta">
            {list.data.total} {list.data.total === 1 ? 'model' : 'models'}
            {q ? ` matching “${q}”` : ''}
          </span>
        )}
      </form>
      <Notice>{notice}</Notice>
      {list.loading && !list.data && <Spinner />}
      <ErrorBox error={list.error} onRetry={list.reload} />
      {list.data?.total === 0 &&
        (q ? (
          <Empty title="No model matches">Try part of an id, such as “gpt” or “claude”.</Empty>
        ) : (
          <Empty title="No models registered">Add the models your upstreams serve.</Empty>
        ))}
      {!!list.data?.items.length && (
        <div className="table-wrap">
          <table className="table">
            <caption className="sr-only">Registered models</caption>
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
                    <div className="meta mono">{m.id}</div>
                  </th>
                  <td>{formatNumber(m.context_length)}</td>
                  <td>{perMillion(m.pricing?.prompt)}</td>
                  <td>{perMillion(m.pricing?.completion)}</td>
                  <td>
                    {(m.input_modalities ?? []).join('+') || 'text'} →{' '}
                    {(m.output_modalities ?? []).join('+') || 'text'}
                  </td>
                  <td className="actions">
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-label={`Edit ${m.name}`}
                      onClick={() => setEditing(m)}
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      className="btn btn-small btn-danger"
                      aria-label={`Delete ${m.name}`}
                      onClick={() => setDeleting(m)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && <Pager page={page} pageSize={PAGE_SIZE} total={list.data.total} onPage={setPage} />}
      <Modal
        title={current ? `Edit ${current.id}` : 'New model'}
        open={editing !== null}
        onClose={() => setEditing(null)}
        wide
      >
        {editing !== null && (
          <SpecForm
            key={current?.id ?? 'new'}
            fields={fields(!current)}
            initial={toValues(current)}
            submitLabel={current ? 'Save changes' : 'Create model'}
            onSubmit={save}
            onCancel={() => setEditing(null)}
          />
        )}
      </Modal>
      <Confirm
        open={deleting !== null}
        title="Delete model?"
        message={`${deleting?.id ?? ''} will disappear from /v1/models.`}
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      />
    </>
  );
}
