import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from 'react';
import { errorText } from '../api';
import { useAuth } from '../auth';
import { type ChatMessage, type ChatUsage, listModels, streamChat, type V1Model } from '../chat';
import { ErrorBox, Field, Spinner } from '../components/ui';
import { formatNumber, formatUsd } from '../format';
import { useDocumentTitle } from '../hooks';
import { PLAYGROUND_KEY, rememberedKeys } from '../keystore';
import { numberProblem } from '../number-input';
import { Link } from '../router';

const STORAGE = PLAYGROUND_KEY;
let nextTurn = 1;

interface Turn extends ChatMessage {
  id: number;
  reasoning?: string;
  model?: string;
  usage?: ChatUsage;
  ms?: number;
  ttft?: number;
  error?: string;
}

/**
 * The conversation the next request carries: each question with its answer. A question whose
 * answer failed, was stopped before any text or came back empty goes with it, so the model never
 * sees two questions in a row or an empty assistant turn (which some upstreams refuse).
 */
function answeredTurns(turns: Turn[]): Turn[] {
  const out: Turn[] = [];
  for (let i = 0; i < turns.length; i++) {
    const t = turns[i];
    const answer = turns[i + 1];
    if (t.role === 'user' && answer?.role === 'assistant') {
      if (!answer.error && answer.content) out.push(t, answer);
      i++;
    } else if (t.role === 'user') out.push(t);
  }
  return out;
}

/** What the screen reader hears when an answer ends: how it ended. */
function outcome(t: Turn): string {
  if (!t.error) return 'Answer complete.';
  return t.error === 'Stopped.' ? 'Answer stopped.' : `Answer failed: ${t.error}`;
}

export function Playground() {
  useDocumentTitle('Playground');
  const fresh = rememberedKeys();
  // The model chosen first is the user's default model (Account), as a request without one gets.
  const defaultModel = useAuth().user?.default_model?.trim() ?? '';
  const preferred = useRef(defaultModel);
  preferred.current = defaultModel;
  const [key, setKey] = useState(() => sessionStorage.getItem(STORAGE) ?? fresh.at(-1)?.secret ?? '');
  const [remember, setRemember] = useState(() => sessionStorage.getItem(STORAGE) !== null);
  const [models, setModels] = useState<V1Model[]>([]);
  const [modelsError, setModelsError] = useState<string | null>(null);
  const [loadingModels, setLoadingModels] = useState(false);
  /** Bumped by Try again: the model list is read again with the same key. */
  const [modelsTry, setModelsTry] = useState(0);
  const [model, setModel] = useState('');
  const [system, setSystem] = useState('');
  const [temperature, setTemperature] = useState('');
  const [maxTokens, setMaxTokens] = useState('');
  /** Why temperature or max tokens cannot be sent, under the field; nothing is sent until fixed. */
  const [paramErrors, setParamErrors] = useState<{ temperature?: string | null; maxTokens?: string | null }>(
    {},
  );
  const tempRef = useRef<HTMLInputElement>(null);
  const maxRef = useRef<HTMLInputElement>(null);
  const [input, setInput] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const log = useRef<HTMLDivElement>(null);

  // Leaving the page stops the answer being generated (and billed) for no one to see.
  useEffect(() => () => abort.current?.abort(), []);

  useEffect(() => {
    if (remember && key) sessionStorage.setItem(STORAGE, key);
    else sessionStorage.removeItem(STORAGE);
  }, [key, remember]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: modelsTry (Try again) asks for the list again
  useEffect(() => {
    const k = key.trim();
    setModelsError(null);
    if (!k) {
      setModels([]);
      return;
    }
    const ctl = new AbortController();
    const timer = setTimeout(() => {
      setLoadingModels(true);
      listModels(k, ctl.signal)
        .then((list) => {
          setModels(list);
          // The model picked stays while the key serves it; else the user's default model when
          // the key serves that; else the first listed.
          setModel((m) => {
            if (m && list.some((x) => x.id === m)) return m;
            const d = preferred.current;
            return d && list.some((x) => x.id === d) ? d : (list[0]?.id ?? '');
          });
        })
        .catch((e) => {
          if (!ctl.signal.aborted) {
            setModels([]);
            setModelsError(errorText(e));
          }
        })
        .finally(() => !ctl.signal.aborted && setLoadingModels(false));
    }, 300);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [key, modelsTry]);

  useEffect(() => {
    const el = log.current;
    if (el) el.scrollTop = el.scrollHeight;
  });

  function patchLast(fn: (t: Turn) => Turn) {
    setTurns((ts) => [...ts.slice(0, -1), fn(ts[ts.length - 1])]);
  }

  async function send(e?: FormEvent) {
    e?.preventDefault();
    const text = input.trim();
    if (!text || !model || !key.trim() || busy) return;
    // "1e" or "abc" reads as '' (the browser's value of a number field holding no number) and
    // went without the parameter; 3 or 1.5 the upstream would refuse. Said under the field.
    const problems = {
      temperature: numberProblem(tempRef.current, { min: 0, max: 2 }),
      maxTokens: numberProblem(maxRef.current, { min: 1, whole: true }),
    };
    setParamErrors(problems);
    if (problems.temperature || problems.maxTokens) {
      (problems.temperature ? tempRef : maxRef).current?.focus();
      return;
    }
    const history: ChatMessage[] = [
      ...(system.trim() ? [{ role: 'system' as const, content: system.trim() }] : []),
      ...answeredTurns(turns).map(({ role, content }) => ({ role, content })),
      { role: 'user', content: text },
    ];
    setTurns((ts) => [
      ...ts,
      { id: nextTurn++, role: 'user', content: text },
      // Named by the model asked, until the answer names the one that served (a failed turn too).
      { id: nextTurn++, role: 'assistant', content: '', model },
    ]);
    setInput('');
    setBusy(true);
    const ctl = new AbortController();
    abort.current = ctl;
    const started = performance.now();
    let first = 0;
    try {
      await streamChat(
        key.trim(),
        {
          model,
          messages: history,
          temperature: temperature === '' ? undefined : Number(temperature),
          max_tokens: maxTokens === '' ? undefined : Number(maxTokens),
        },
        {
          onDelta: (d) => {
            if (!first) first = performance.now() - started;
            patchLast((t) => ({ ...t, content: t.content + d, ttft: Math.round(first) }));
          },
          onReasoning: (d) => patchLast((t) => ({ ...t, reasoning: (t.reasoning ?? '') + d })),
          onUsage: (u) => patchLast((t) => ({ ...t, usage: u })),
          onModel: (m) => patchLast((t) => ({ ...t, model: m })),
        },
        ctl.signal,
      );
    } catch (err) {
      const stopped = ctl.signal.aborted;
      patchLast((t) => ({ ...t, error: stopped ? 'Stopped.' : errorText(err) }));
    } finally {
      patchLast((t) => ({ ...t, ms: Math.round(performance.now() - started) }));
      setBusy(false);
      abort.current = null;
    }
  }

  function onKeyDown(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void send();
    }
  }

  const last = turns[turns.length - 1];
  return (
    <div className="playground">
      <h1>Playground</h1>
      <section className="card pg-settings" aria-label="Settings">
        <div className="field">
          <label htmlFor="pg-key">API key</label>
          {fresh.length > 0 && (
            <select
              aria-label="Keys created in this tab"
              value={fresh.find((f) => f.secret === key)?.id ?? ''}
              onChange={(e) => setKey(fresh.find((f) => String(f.id) === e.target.value)?.secret ?? key)}
            >
              <option value="">Choose a key you just created…</option>
              {fresh.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name} ({f.prefix.replace(/…$/, '')}…)
                </option>
              ))}
            </select>
          )}
          <input
            id="pg-key"
            type="password"
            autoComplete="off"
            placeholder="sk-…"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            aria-describedby="pg-key-hint"
          />
          <small id="pg-key-hint" className="hint">
            Paste one of your keys; secrets are only shown once, so <Link to="/keys">create a key</Link> if
            you need one.
          </small>
          <div className="field-check">
            <input
              id="pg-remember"
              type="checkbox"
              checked={remember}
              onChange={(e) => setRemember(e.target.checked)}
            />
            <label htmlFor="pg-remember">Remember the key in this tab</label>
          </div>
        </div>
        <div className="field">
          <label htmlFor="pg-model">Model</label>
          <select
            id="pg-model"
            value={model}
            onChange={(e) => setModel(e.target.value)}
            disabled={!models.length}
          >
            {!models.length && (
              <option value="">
                {!key ? 'Enter a key first' : modelsError ? 'Models could not be loaded' : 'No models'}
              </option>
            )}
            {models.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name && m.name !== m.id ? `${m.name} (${m.id})` : m.id}
              </option>
            ))}
          </select>
          {loadingModels && <Spinner label="Loading models…" />}
          <ErrorBox
            error={modelsError && `The models could not be loaded: ${modelsError}`}
            onRetry={() => setModelsTry((n) => n + 1)}
          />
        </div>
        <div className="pg-params">
          <Field label="Temperature" id="pg-temp" error={paramErrors.temperature}>
            {(p) => (
              <input
                {...p}
                ref={tempRef}
                type="number"
                min={0}
                max={2}
                step={0.1}
                placeholder="default"
                value={temperature}
                onChange={(e) => {
                  setTemperature(e.target.value);
                  setParamErrors((x) => ({ ...x, temperature: null }));
                }}
              />
            )}
          </Field>
          <Field label="Max tokens" id="pg-max" error={paramErrors.maxTokens}>
            {(p) => (
              <input
                {...p}
                ref={maxRef}
                type="number"
                min={1}
                step={1}
                placeholder="default"
                value={maxTokens}
                onChange={(e) => {
                  setMaxTokens(e.target.value);
                  setParamErrors((x) => ({ ...x, maxTokens: null }));
                }}
              />
            )}
          </Field>
        </div>
        <div className="field">
          <label htmlFor="pg-system">System prompt</label>
          <textarea id="pg-system" rows={2} value={system} onChange={(e) => setSystem(e.target.value)} />
        </div>
      </section>

      <section className="card pg-chat" aria-label="Conversation">
        <div className="pg-log" ref={log} aria-busy={busy}>
          {turns.length === 0 && (
            <p className="meta">Ask something to start. Answers stream in as they are written.</p>
          )}
          {turns.map((t, i) => (
            <div
              key={t.id}
              className={`msg msg-${t.role}`}
              data-testid={t.role === 'assistant' ? 'assistant-message' : undefined}
            >
              <div className="msg-role">{t.role === 'user' ? 'You' : (t.model ?? 'Assistant')}</div>
              {t.reasoning && (
                <details className="reasoning">
                  <summary>Reasoning</summary>
                  <p>{t.reasoning}</p>
                </details>
              )}
              <div className="msg-text">
                {t.content}
                {busy && i === turns.length - 1 && <span className="cursor" aria-hidden="true" />}
              </div>
              {t.error && (
                <p className={t.error === 'Stopped.' ? 'meta' : 'text-error'} role="alert">
                  {t.error}
                </p>
              )}
              {t.role === 'assistant' && (t.usage || t.ms) && !(busy && i === turns.length - 1) && (
                <p className="usage" data-testid="usage">
                  {[
                    t.usage &&
                      `${formatNumber(t.usage.prompt_tokens)} in · ${formatNumber(t.usage.completion_tokens)} out · cost ${formatUsd(t.usage.cost ?? null)}`,
                    t.ttft ? `first token ${t.ttft} ms` : '',
                    t.ms ? `${t.ms} ms` : '',
                  ]
                    .filter(Boolean)
                    .join(' · ')}
                </p>
              )}
            </div>
          ))}
        </div>
        <p className="sr-only" aria-live="polite">
          {busy ? 'Answer streaming…' : last?.role === 'assistant' ? outcome(last) : ''}
        </p>
        <form className="pg-input" onSubmit={send}>
          <label htmlFor="pg-message" className="sr-only">
            Message
          </label>
          <textarea
            id="pg-message"
            rows={3}
            placeholder="Type a message. Enter sends, Shift+Enter adds a line."
            value={input}
            onChange={(e) => setInput(e.target.value)}
            onKeyDown={onKeyDown}
          />
          <div className="pg-actions">
            {busy ? (
              <button type="button" className="btn" onClick={() => abort.current?.abort()}>
                Stop
              </button>
            ) : (
              <button type="button" className="btn" onClick={() => setTurns([])} disabled={!turns.length}>
                Clear
              </button>
            )}
            <button
              type="submit"
              className="btn btn-primary"
              disabled={busy || !input.trim() || !model || !key.trim()}
            >
              Send
            </button>
          </div>
        </form>
      </section>
    </div>
  );
}
