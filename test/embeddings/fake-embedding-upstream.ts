import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real HTTP server on loopback that records what it receives and answers with a provider fixture. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface FakeReply {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface FakeUpstream {
  baseUrl: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

export async function startFakeUpstream(reply: (req: ReceivedRequest) => FakeReply): Promise<FakeUpstream> {
  const requests: ReceivedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const received = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: text ? JSON.parse(text) : null,
    };
    requests.push(received);
    const r = reply(received);
    res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
    res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export function fixture(provider: string, name: string): any {
  return JSON.parse(readFileSync(new URL(`../fixtures/${provider}/${name}`, import.meta.url), 'utf8'));
}
