import { badRequest, type GatewayError } from '../errors.js';
import type { ChatMessage } from './types.js';

/**
 * What an `image_url` part's data URL must be, whatever the upstream: `data:image/<type>;base64,`
 * and the base64 itself, as OpenAI takes it (it answers 400 for anything else: "Invalid MIME
 * type. Only image types are supported.", or an invalid image URL). Before, a PDF or a data URL
 * without `;base64` was sent on (to Anthropic as an image of type application/pdf, or as a `url`
 * source holding the data URL; to Gemini as a `fileData` URI), and the client got the
 * upstream's 400 after an attempt, or one upstream served what another refused. A PDF goes in a
 * `file` part. Which image types each upstream kind takes is its adapter's business (Anthropic
 * and Gemini take fewer: `unfitImages` in src/providers/shared/media.ts); http(s) and other URLs
 * are not read here.
 */
const IMAGE_DATA_URL = /^data:image\/[a-z0-9][a-z0-9.+-]*;base64,[A-Za-z0-9+/_\-\s]+=*\s*$/i;

/** The 400 for the first `image_url` part whose data URL is not an image in base64, else undefined. */
export function badImageDataUrl(messages: readonly ChatMessage[]): GatewayError | undefined {
  const found = firstImageFault(messages, imageDataUrlFault);
  return found && badRequest(`${found.param}: ${found.fault}`, found.param);
}

/**
 * The first `image_url` part of the messages for which `fault` (given its URL) says what is
 * wrong, named as the chat request names it (`messages.2.content.1.image_url.url`); undefined
 * when `fault` finds nothing in any. Each check of images over the whole request walks them so.
 */
export function firstImageFault<T>(
  messages: readonly ChatMessage[],
  fault: (url: string) => T | undefined,
): { param: string; fault: T } | undefined {
  for (let i = 0; i < messages.length; i++) {
    const content = messages[i]!.content;
    if (!Array.isArray(content)) continue;
    for (let j = 0; j < content.length; j++) {
      const p = content[j]!;
      if (p.type !== 'image_url') continue;
      const why = fault(p.image_url.url);
      if (why !== undefined) return { param: `messages.${i}.content.${j}.image_url.url`, fault: why };
    }
  }
  return undefined;
}

/**
 * Why an image's data URL is not an image in base64 (the rules above), or undefined: for one that
 * is, and for any other URL (http(s) and others are not read here). `filePart` is what the
 * client's wire calls the part a PDF goes in (chat's `file`, the Responses API's `input_file`).
 */
export function imageDataUrlFault(url: unknown, filePart = 'a file part'): string | undefined {
  if (typeof url !== 'string' || url.slice(0, 5).toLowerCase() !== 'data:') return undefined;
  if (IMAGE_DATA_URL.test(url)) return undefined;
  const comma = url.indexOf(',');
  const meta = comma === -1 ? url.slice(5) : url.slice(5, comma);
  const type = meta.split(';')[0]!.toLowerCase();
  if (comma === -1) return 'a data URL needs a comma before its data';
  if (!type.startsWith('image/'))
    return `${type || 'no media type'} is not an image (send a PDF or other document as ${filePart})`;
  if (!/;base64$/i.test(meta)) return 'a data URL must be base64 (data:image/<type>;base64,<data>)';
  return /\S/.test(url.slice(comma + 1)) ? 'the data is not base64' : 'the data URL holds no data';
}
