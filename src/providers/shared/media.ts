import { firstImageFault } from '../../gateway/chat/image-urls.js';
import type { ChatMessage } from '../../gateway/chat/types.js';
import { UnfitCandidate } from '../../gateway/errors.js';

/**
 * Splits a `data:<mime>;base64,<data>` URL; undefined for anything else. The media type is
 * lowercased and `image/jpg` (written from the file extension by many clients, accepted by OpenAI)
 * becomes `image/jpeg`: Anthropic's media_type enum and Gemini's inlineData both reject it with a
 * 400 ("Unsupported MIME type: image/jpg").
 */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma === -1) return undefined;
  const meta = url.slice(5, comma);
  if (!meta.endsWith(';base64')) return undefined;
  const type = meta.slice(0, -7).toLowerCase();
  return {
    mediaType: type === 'image/jpg' ? 'image/jpeg' : type || 'application/octet-stream',
    data: url.slice(comma + 1),
  };
}

/** The image types Anthropic takes (its `image` block's media_type enum). */
export const ANTHROPIC_IMAGE_TYPES: ReadonlySet<string> = new Set([
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
]);
/** The image types Gemini lists (no GIF, no SVG: Gemini 2 and later refuse a GIF). */
export const GEMINI_IMAGE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/webp',
  'image/heic',
  'image/heif',
]);

/**
 * The refusal of a request holding an `image_url` data URL of an image type this upstream's kind
 * does not take (SVG, BMP, TIFF... at Anthropic and Gemini; the body was already checked to hold
 * only base64 images, `badImageDataUrl`): `UnfitCandidate` scoped to the upstream, so the
 * model's other upstreams (an OpenAI-compatible server that takes the type) are still tried, and
 * with none the client gets this 400 naming the part rather than the provider's after an
 * attempt. Undefined when every image fits.
 */
export function unfitImages(
  messages: readonly ChatMessage[],
  accepted: ReadonlySet<string>,
  provider: string,
): UnfitCandidate | undefined {
  const found = firstImageFault(messages, (url) => {
    const type = parseDataUrl(url)?.mediaType;
    return type === undefined || accepted.has(type) ? undefined : type;
  });
  if (!found) return undefined;
  return new UnfitCandidate(
    `${found.param}: ${provider} upstreams do not take ${found.fault} images (only ${[...accepted].map((t) => t.slice(6)).join(', ')})`,
    found.param,
    'upstream',
  );
}

const EXT_MIME: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  // Video as Gemini names the types it takes (video/mov, not video/quicktime).
  mp4: 'video/mp4',
  mpeg: 'video/mpeg',
  mpg: 'video/mpg',
  mov: 'video/mov',
  avi: 'video/avi',
  flv: 'video/x-flv',
  webm: 'video/webm',
  wmv: 'video/wmv',
  '3gp': 'video/3gpp',
};

/** Media type guessed from a URL's extension, for upstreams that require one next to a URL. */
export function guessMediaType(url: string, fallback = 'image/jpeg'): string {
  const path = url.split(/[?#]/)[0];
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return EXT_MIME[ext] ?? fallback;
}

/** Joins a base URL and a path without doubling or losing the slash. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + '/' + path.replace(/^\/+/, '');
}

/**
 * Places the media of system/developer messages for an upstream whose system field takes text
 * only (Anthropic's `system`, Gemini's `systemInstruction`): in order, at the start of the first
 * user turn, after any tool results (which must lead it), or in a user turn of their own at the
 * start when there is none. The model still sees them ahead of the conversation.
 */
export function mediaToFirstUserTurn<T extends { role: string }, P>(
  turns: T[],
  media: P[],
  itemsOf: (turn: T) => P[],
  isToolResult: (item: P) => boolean,
  userTurn: (items: P[]) => T,
): void {
  const first = turns.find((t) => t.role === 'user');
  if (!first) {
    turns.unshift(userTurn(media));
    return;
  }
  const items = itemsOf(first);
  const at = items.findIndex((p) => !isToolResult(p));
  items.splice(at === -1 ? items.length : at, 0, ...media);
}
