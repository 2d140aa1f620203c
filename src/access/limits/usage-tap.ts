import type { RequestLogEntry } from '../../gateway/usage/request-log-entry.js';

export type UsageObserver = (entry: RequestLogEntry) => void;

/**
 * Observes every finished chat and embeddings request at the one place both report it: the
 * request log writer's `record`. Observers run after the record and can never break it.
 */
export function tapRequestLogs(writer: { record(e: RequestLogEntry): void }, observer: UsageObserver): void {
  const record = writer.record.bind(writer);
  writer.record = (entry: RequestLogEntry) => {
    record(entry);
    try {
      observer(entry);
    } catch {
      // Metrics and limit corrections are best effort; the request is already answered.
    }
  };
}
