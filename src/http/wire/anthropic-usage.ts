/**
 * An answer's `usage` on /v1/messages, in Anthropic's meaning: input_tokens excludes cached
 * tokens (prompt - cache reads - cache writes), with those two as cache_read_input_tokens /
 * cache_creation_input_tokens; the answer's and message_start's usage add the writes by TTL
 * (`cache_creation`), which Anthropic's message_delta usage does not carry. `server_tool_use`
 * (web searches and fetches) is passed on when the upstream reported it.
 */
import type { ChatUsage } from '../../gateway/chat/types.js';

/**
 * A Message's usage (Anthropic's `Usage`: the non-streamed answer and message_start), with the
 * cache writes by TTL in `cache_creation`: the one-hour ones (`cache_write_1h_tokens`, at most all
 * the writes) and the rest as five-minute ones, as the gateway bills them. An upstream that gave
 * no TTL split (OpenRouter's `cache_write_tokens`) has all its writes as five-minute ones.
 */
export function anthropicUsage(u: ChatUsage | undefined): Record<string, unknown> {
  const { server_tool_use, ...counts } = anthropicDeltaUsage(u);
  const write = counts.cache_creation_input_tokens;
  const write1h = Math.min(write, Math.max(0, int(u?.prompt_tokens_details?.cache_write_1h_tokens)));
  return {
    ...counts,
    cache_creation: { ephemeral_5m_input_tokens: write - write1h, ephemeral_1h_input_tokens: write1h },
    ...(server_tool_use ? { server_tool_use } : {}),
  };
}

/**
 * message_delta's usage (Anthropic's `MessageDeltaUsage`): the counts, without `cache_creation`,
 * and the server tool calls the upstream reported (`server_tool_use`), when it did.
 */
export function anthropicDeltaUsage(u: ChatUsage | undefined) {
  const read = int(u?.prompt_tokens_details?.cached_tokens);
  const write = int(u?.prompt_tokens_details?.cache_write_tokens);
  const s = u?.server_tool_use;
  return {
    input_tokens: Math.max(0, int(u?.prompt_tokens) - read - write),
    output_tokens: int(u?.completion_tokens),
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    ...(s && typeof s === 'object'
      ? {
          server_tool_use: {
            web_search_requests: int(s.web_search_requests),
            web_fetch_requests: int(s.web_fetch_requests),
          },
        }
      : {}),
  };
}

const int = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n) : 0);
