import { request } from 'node:http';

export interface LateRead {
  status: number;
  /** 'whole' when the body ended, 'cut' when the connection closed before it did. */
  outcome: 'whole' | 'cut';
  /** Body bytes received. */
  got: number;
  /** The declared content-length. */
  length: number;
}

/**
 * POSTs `body` as JSON to `url` with a bearer `token`, leaves the answer unread for `pauseMs`
 * once its headers arrived (the client's socket fills and stays full), then reads what arrives.
 */
export async function postAndReadLate(
  url: string,
  token: string,
  body: unknown,
  pauseMs: number,
): Promise<LateRead> {
  const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    req.on('response', resolve).on('error', reject);
    req.end(JSON.stringify(body));
  });
  res.pause();
  await new Promise((r) => setTimeout(r, pauseMs));
  let got = 0;
  const outcome = new Promise<'whole' | 'cut'>((resolve) => {
    res.on('data', (b: Buffer) => {
      got += b.length;
    });
    res.on('end', () => resolve('whole'));
    res.on('error', () => resolve('cut'));
    res.socket.once('close', () => resolve('cut'));
  });
  res.resume();
  return {
    status: res.statusCode ?? 0,
    outcome: await outcome,
    got,
    length: Number(res.headers['content-length']),
  };
}
