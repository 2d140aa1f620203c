import { GatewayError } from '../errors.js';
import {
  DEFAULT_IMAGE_LIMITS,
  decodeImageDataUrl,
  ImageError,
  type ImageLimits,
  inspectImage,
} from '../images/image-data.js';
import type { FetchedImage } from '../images/safe-fetch.js';
import type {
  EmbeddingRequest,
  ImageSource,
  ResolvedEmbeddingRequest,
  ResolvedPart,
} from './embedding-request.js';
import { runLimited } from './run-limited.js';

/**
 * Turns every image part into validated bytes before any upstream is chosen: URLs are fetched
 * by our SSRF-safe fetcher (never by an upstream), data URLs decoded, and each image measured
 * for pixel accounting. Any problem is the client's: a 400 naming the input and part.
 */
export interface ResolveImagesOptions {
  fetcher: { fetch(url: string, signal?: AbortSignal): Promise<FetchedImage> };
  /**
   * The request's: once it fires (the client left) no further image is fetched and the fetches
   * in flight are aborted; the call fails with its reason.
   */
  signal?: AbortSignal;
  limits?: ImageLimits;
  /** Image fetches in flight at once. */
  concurrency?: number;
  /**
   * Cap on all image bytes of one request. Per-image limits alone would let 1000 URL parts pull
   * 20 GB into memory; the body limit only bounds inline base64.
   */
  maxTotalBytes?: number;
}

export const DEFAULT_MAX_TOTAL_IMAGE_BYTES = 128 * 1024 * 1024;

export async function resolveImages(
  req: EmbeddingRequest,
  opts: ResolveImagesOptions,
): Promise<ResolvedEmbeddingRequest> {
  const limits = opts.limits ?? DEFAULT_IMAGE_LIMITS;
  const jobs: { i: number; j: number; source: ImageSource }[] = [];
  const inputs: ResolvedPart[][] = req.inputs.map((parts, i) =>
    parts.map((p, j) => {
      if (p.type !== 'image') return p;
      jobs.push({ i, j, source: p.source });
      return p as unknown as ResolvedPart; // replaced below
    }),
  );
  const maxTotal = opts.maxTotalBytes ?? DEFAULT_MAX_TOTAL_IMAGE_BYTES;
  let total = 0;
  // After the first problem the request is a 400, and after the client left nobody waits for
  // it: no further image is fetched or decoded (`runLimited`), or a request of many URLs would
  // still download every one of them.
  const load = async (k: number) => {
    const job = jobs[k];
    const image = await loadImage(job, opts, limits);
    total += image.bytes.length;
    if (total > maxTotal) {
      const param = `inputs[${job.i}].content[${job.j}]`;
      throw new GatewayError(400, `${param}: the images of this request exceed ${maxTotal} bytes in total`, {
        param,
      });
    }
    inputs[job.i][job.j] = { type: 'image', image };
  };
  await runLimited(jobs.length, opts.concurrency ?? 4, load, opts.signal);
  return { ...req, inputs };
}

async function loadImage(
  job: { i: number; j: number; source: ImageSource },
  opts: ResolveImagesOptions,
  limits: ImageLimits,
) {
  const param = `inputs[${job.i}].content[${job.j}]`;
  try {
    const bytes =
      job.source.kind === 'data_url'
        ? decodeImageDataUrl(job.source.dataUrl, limits)
        : (await opts.fetcher.fetch(job.source.url, opts.signal)).bytes;
    return inspectImage(bytes, limits);
  } catch (err) {
    if (err instanceof ImageError) {
      const metadata = (err as { refused?: boolean }).refused ? { reason: 'url_refused' } : undefined;
      throw new GatewayError(400, `${param}: ${err.message}`, { param, metadata });
    }
    throw err;
  }
}
