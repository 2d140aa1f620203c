import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveImages } from '../../src/gateway/embeddings/resolve-images.js';
import { GatewayError } from '../../src/gateway/errors.js';
import { createSafeFetcher } from '../../src/gateway/images/safe-fetch.js';
import { decodeVoyageMultimodalRequest } from '../../src/http/wire/voyage.js';
import { dataUrl, makeGif, makeJpeg, makePng } from './test-images.js';

let server: Server;
let base: string;
let hits = 0;
let slowHits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    if (req.url === '/photo.jpg')
      return void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(makeJpeg(640, 480));
    if (req.url?.startsWith('/slow.jpg')) {
      slowHits++;
      setTimeout(() => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(makeJpeg(64, 64)), 100);
      return;
    }
    if (req.url === '/page.html')
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

async function rejection(p: Promise<unknown>): Promise<GatewayError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  expect((err as GatewayError).status).toBe(400);
  return err as GatewayError;
}

describe('resolveImages', () => {
  it('fetches URLs (allow-listed) and decodes data URLs, measuring each image', async () => {
    const fetcher = createSafeFetcher({ allowList: ['127.0.0.1'] });
    const req = decodeVoyageMultimodalRequest({
      inputs: [
        {
          content: [
            { type: 'text', text: 'x' },
            { type: 'image_url', image_url: `${base}/photo.jpg` },
          ],
        },
        { content: [{ type: 'image_base64', image_base64: dataUrl('image/png', makePng(3, 2)) }] },
      ],
    });
    const resolved = await resolveImages(req, { fetcher });
    expect(resolved.inputs[0][0]).toEqual({ type: 'text', text: 'x' });
    expect(resolved.inputs[0][1]).toMatchObject({
      type: 'image',
      image: { format: 'jpeg', width: 640, height: 480 },
    });
    expect(resolved.inputs[1][0]).toMatchObject({ type: 'image', image: { format: 'png', pixels: 6 } });
    await fetcher.close();
  });

  it('names the input and part for every image problem', async () => {
    const fetcher = createSafeFetcher({ allowList: ['127.0.0.1'] });
    const one = (part: object, i = 1) =>
      resolveImages(
        decodeVoyageMultimodalRequest({
          inputs: [
            { content: [{ type: 'text', text: 'ok' }] },
            ...(i === 2 ? [{ content: [{ type: 'text', text: 'ok' }] }] : []),
            { content: [{ type: 'text', text: 'y' }, part] },
          ],
        }),
        { fetcher },
      );
    expect((await rejection(one({ type: 'image_url', image_url: `${base}/page.html` }))).message).toMatch(
      /^inputs\[1\]\.content\[1\]: unsupported image format/,
    );
    expect((await rejection(one({ type: 'image_url', image_url: `${base}/nope.png` }, 2))).message).toMatch(
      /^inputs\[2\]\.content\[1\]: image URL answered HTTP 404/,
    );
    expect(
      (
        await rejection(
          one({ type: 'image_base64', image_base64: dataUrl('image/gif', makeGif(5000, 5000)) }),
        )
      ).message,
    ).toMatch(/^inputs\[1\]\.content\[1\]: image has 5000x5000 = 25000000 pixels, more than the limit/);
    expect(
      (await rejection(one({ type: 'image_base64', image_base64: dataUrl('image/tiff', makePng(1, 1)) })))
        .message,
    ).toMatch(/unsupported image media type "image\/tiff"/);
    await fetcher.close();
  });

  it('caps the total image bytes of one request', async () => {
    const fetcher = createSafeFetcher({ allowList: ['127.0.0.1'] });
    const png = makePng(64, 64);
    const req = decodeVoyageMultimodalRequest({
      inputs: Array.from({ length: 3 }, () => ({
        content: [{ type: 'image_base64', image_base64: dataUrl('image/png', png) }],
      })),
    });
    await expect(resolveImages(req, { fetcher, maxTotalBytes: png.length * 3 })).resolves.toBeTruthy();
    const err = await rejection(
      resolveImages(req, { fetcher, maxTotalBytes: png.length * 3 - 1, concurrency: 1 }),
    );
    expect(err.message).toMatch(/^inputs\[2\]\.content\[0\]: the images of this request exceed/);
    await fetcher.close();
  });

  it('fetches no further image once one has failed: the request is already a 400', async () => {
    const fetcher = createSafeFetcher({ allowList: ['127.0.0.1'] });
    slowHits = 0;
    // A missing first image, then 19 that would each be downloaded for nothing.
    const req = decodeVoyageMultimodalRequest({
      inputs: [
        { content: [{ type: 'image_url', image_url: `${base}/missing.jpg` }] },
        ...Array.from({ length: 19 }, (_, i) => ({
          content: [{ type: 'image_url', image_url: `${base}/slow.jpg?${i}` }],
        })),
      ],
    });
    const err = await rejection(resolveImages(req, { fetcher }));
    expect(err.param).toBe('inputs[0].content[0]');
    await new Promise((resolve) => setTimeout(resolve, 400)); // fetches in flight have finished
    // Only the 3 fetched alongside the failing one (4 at a time) went out.
    expect(slowHits).toBe(3);
    await fetcher.close();
  });

  it('refuses private URLs without connecting when not allow-listed', async () => {
    const fetcher = createSafeFetcher();
    const before = hits;
    const err = await rejection(
      resolveImages(
        decodeVoyageMultimodalRequest({
          inputs: [{ content: [{ type: 'image_url', image_url: `${base}/photo.jpg` }] }],
        }),
        { fetcher },
      ),
    );
    expect(err.message).toMatch(
      /^inputs\[0\]\.content\[0\]: refused to fetch image URL: address 127\.0\.0\.1 is a loopback/,
    );
    expect(err.param).toBe('inputs[0].content[0]');
    expect(err.metadata).toEqual({ reason: 'url_refused' });
    expect(hits).toBe(before);
    await fetcher.close();
  });
});
