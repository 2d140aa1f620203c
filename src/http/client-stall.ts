import type { ServerResponse } from 'node:http';

/**
 * Call right after a response's last bytes were handed to Node (`res.end`, `reply.send`). When
 * the client's socket did not take them all (its buffers are full: the client stopped reading),
 * a client that frees no room in it for `ms` is disconnected; each period with progress starts
 * another. Progress shows only as room freed in this socket, so a reader has to take about a
 * socket's buffers' worth (a few MB) per period. Without this a client that never reads, still
 * connected, keeps its socket and
 * the unsent part of the answer (megabytes for an embeddings answer) for good. The usual case,
 * where the kernel took everything, costs a property read. `ms` is `gateway.client_stall_ms`;
 * 0 = never.
 */
export function disconnectIfNotTaken(res: ServerResponse, ms: number): void {
  if (ms <= 0 || res.destroyed || res.writableFinished || res.writableLength === 0) return;
  let left = res.writableLength;
  const check = () => {
    const now = res.writableLength;
    if (now < left) {
      // Some was taken in the last period: another period for the rest.
      left = now;
      timer = setTimeout(check, ms);
    } else res.destroy();
  };
  let timer = setTimeout(check, ms);
  const clear = () => clearTimeout(timer);
  res.once('finish', clear).once('close', clear);
}
