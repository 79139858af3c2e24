/**
 * Reading a request on a recorded route without holding the server's one
 * thread for long: the messages of a large conversation are hashed in
 * slices (a 7.5 MiB request of 200,000 short messages took seconds in one
 * go), then the wire's reader reads the request with those hashes.
 *
 * @module
 */
import { messageHash } from "./message_hash.ts";
import type { TimeSlices } from "./time_slices.ts";
import {
  isObject,
  type NormRequest,
  type Wire,
  type WireReader,
} from "./wire_types.ts";

/** Conversations up to this many messages are read in one go. */
const SMALL = 256;

/**
 * The list a wire's conversation is read from (`messages`, or the
 * Responses API's `input`), or null when the body has none.
 *
 * @param wire The wire.
 * @param body The parsed body.
 * @returns The list's items.
 */
export function conversationItems(wire: Wire, body: unknown): unknown[] | null {
  if (!isObject(body)) return null;
  if (wire === "openai_responses") {
    return typeof body.input === "string"
      ? [body.input]
      : Array.isArray(body.input)
      ? body.input
      : null;
  }
  return Array.isArray(body.messages) ? body.messages : null;
}

/**
 * Read a request, hashing a long conversation's messages in slices.
 *
 * @param reader The wire's reader.
 * @param wire The wire.
 * @param body The parsed body.
 * @param slices Where to yield.
 * @param progress Told how far it got before each yield.
 * @returns The request as read.
 * @throws {WireShapeError} When it is not the API's request shape.
 */
export async function readRequest(
  reader: WireReader,
  wire: Wire,
  body: unknown,
  slices: TimeSlices,
  progress?: (done: number, of: number) => void,
): Promise<NormRequest> {
  const items = conversationItems(wire, body);
  if (items === null || items.length <= SMALL) return reader.request(body);
  const hashes: string[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    hashes[i] = messageHash(items[i]);
    if ((i & 63) === 63 && slices.due()) {
      progress?.(i + 1, items.length);
      await slices.pause();
    }
  }
  progress?.(items.length, items.length);
  await slices.maybePause();
  return reader.request(body, hashes);
}
