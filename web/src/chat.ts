// Streaming client for /v1/chat/completions, authenticated with an API key (not the session).

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  cost?: number | string;
}

export interface V1Model {
  id: string;
  name?: string;
  context_length?: number;
  pricing?: { prompt?: string; completion?: string };
}

export class V1Error extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

async function v1Error(res: Response): Promise<V1Error> {
  let message = `${res.status} ${res.statusText}`.trim();
  try {
    const body = (await res.json()) as { error?: { message?: string } };
    if (body?.error?.message) message = body.error.message;
  } catch {
    // keep the status line
  }
  return new V1Error(res.status, message);
}

export async function listModels(key: string, signal?: AbortSignal): Promise<V1Model[]> {
  // Chat models only: an embedding model would fail in the playground.
  const res = await fetch('/v1/models?endpoint=chat', {
    headers: { Authorization: `Bearer ${key}` },
    signal,
  });
  if (!res.ok) throw await v1Error(res);
  const body = (await res.json()) as { data?: V1Model[] };
  return Array.isArray(body.data) ? body.data : [];
}

/** Splits an SSE byte stream into the payloads of its `data:` lines; comments are skipped. */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = done ? '' : (lines.pop() ?? '');
      for (const line of lines) {
        if (line === '') {
          if (data.length) yield data.join('\n');
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(5).replace(/^ /, ''));
        }
      }
      if (done) {
        if (data.length) yield data.join('\n');
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

export interface StreamHandlers {
  onDelta(text: string): void;
  onReasoning?(text: string): void;
  onUsage(u: ChatUsage): void;
  onModel?(model: string, provider?: string): void;
}

export async function streamChat(
  key: string,
  body: { model: string; messages: ChatMessage[]; temperature?: number; max_tokens?: number },
  handlers: StreamHandlers,
  signal: AbortSignal,
): Promise<{ finishReason: string | null }> {
  const res = await fetch('/v1/chat/completions', {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
    },
    body: JSON.stringify({ ...body, stream: true, usage: { include: true } }),
    signal,
  });
  if (!res.ok || !res.body) throw await v1Error(res);
  let finishReason: string | null = null;
  let announced = false;
  for await (const payload of sseData(res.body)) {
    if (payload === '[DONE]') break;
    let chunk: any;
    try {
      chunk = JSON.parse(payload);
    } catch {
      continue;
    }
    if (chunk.error)
      throw new V1Error(Number(chunk.error.code) || 502, chunk.error.message || 'The upstream failed.');
    if (!announced && chunk.model) {
      handlers.onModel?.(chunk.model, chunk.provider);
      announced = true;
    }
    const choice = chunk.choices?.[0];
    if (choice?.delta?.reasoning) handlers.onReasoning?.(choice.delta.reasoning);
    if (choice?.delta?.content) handlers.onDelta(choice.delta.content);
    if (choice?.finish_reason) finishReason = choice.finish_reason;
    if (chunk.usage) handlers.onUsage(chunk.usage);
  }
  return { finishReason };
}
