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
import type { NormRequest, WireReader } from "./wire_types.ts";
import type { WireSpec } from "./wires/wire_spec.ts";

/** Conversations up to this many messages are read in one go. */
const SMALL = 256;

/**
 * Read a request, hashing a long conversation's messages in slices.
 *
 * @param reader The exchange's reader.
 * @param spec The wire (where its body holds the conversation).
 * @param body The parsed body.
 * @param slices Where to yield.
 * @param progress Told how far it got before each yield.
 * @returns The request as read.
 * @throws {WireShapeError} When it is not the API's request shape.
 */
export async function readRequest(
  reader: WireReader,
  spec: WireSpec,
  body: unknown,
  slices: TimeSlices,
  progress?: (done: number, of: number) => void,
): Promise<NormRequest> {
  const items = spec.history.items(body);
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
