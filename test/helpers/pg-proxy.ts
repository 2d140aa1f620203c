import { startTcpFaultProxy, type TcpFaultProxy } from './tcp-fault-proxy.js';

/**
 * A TCP proxy between a gateway and PostgreSQL that fails the way networks do (see
 * tcp-fault-proxy.ts for `down`, `up`, `freeze` and `freezeAt`). `loseReplyTo(text)`: the next
 * client message containing `text` reaches the server, which runs it (commits included), but its
 * answer never comes back: once the server has said it is ready for the next query, both sides
 * are cut. The client cannot tell whether its statement ran.
 */
export interface PgProxy
  extends Pick<TcpFaultProxy, 'url' | 'down' | 'up' | 'freeze' | 'freezeAt' | 'close'> {
  loseReplyTo(text: string): Promise<void>;
}

/** PostgreSQL's ReadyForQuery message: 'Z', length 5, then the transaction status byte. */
const READY = Buffer.from([0x5a, 0, 0, 0, 5]);

export async function startPgProxy(target: string): Promise<PgProxy> {
  const proxy = await startTcpFaultProxy(target, { defaultPort: 5432 });
  return {
    url: proxy.url,
    down: proxy.down,
    up: proxy.up,
    freeze: proxy.freeze,
    freezeAt: proxy.freezeAt,
    loseReplyTo: (text) => proxy.loseReplyTo(text, READY),
    close: proxy.close,
  };
}
