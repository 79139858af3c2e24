/**
 * An OTLP request read within caps, in steps (see `bounded_caps.ts` for
 * the caps, `bounded_steps.ts` for the steps): spans past a cap are
 * refused (counted for the OTLP partial success), never decoded. One
 * request of 60,000 spans held the event loop for 17 s; capped and
 * stepped, a request is bounded in work and gives the loop a turn between
 * spans. The spans kept are handed out by trace and decoded only when
 * their trace is mapped, so a request holds one trace's objects at a time:
 * decoding all spans first kept ~100 MB alive and gave garbage-collector
 * pauses of 60–130 ms.
 *
 * @module
 */
import { OtlpProtobufError } from "./protobuf_decode.ts";
import { ImportError } from "../importers/import_error.ts";
import { type BoundedOtlp, OtlpCaps, type OtlpLimits } from "./bounded_caps.ts";
import { protobufSteps } from "./bounded_protobuf.ts";
import { jsonSteps } from "./bounded_json.ts";

/**
 * Read an OTLP request (protobuf or JSON, told apart as `parseOtlp` in
 * `import.ts` does: protobuf starts with byte 0x0a, and bytes that are not
 * protobuf are tried as JSON) within caps, in steps.
 *
 * @param bytes The request body.
 * @param limits The caps.
 * @returns The work; it returns the spans kept (by trace) and what the caps
 *   refused.
 * @throws {ImportError} When the body is neither OTLP protobuf nor JSON.
 */
export function* readOtlpSteps(
  bytes: Uint8Array,
  limits: OtlpLimits = {},
): Generator<void, BoundedOtlp> {
  let protobufError: Error | null = null;
  if (bytes[0] === 0x0a) {
    try {
      return yield* protobufSteps(bytes, new OtlpCaps(limits));
    } catch (err) {
      if (!(err instanceof OtlpProtobufError)) throw err;
      protobufError = err;
    }
  }
  try {
    return yield* jsonSteps(bytes, new OtlpCaps(limits));
  } catch (err) {
    if (!protobufError || !(err instanceof ImportError)) throw err;
    throw new ImportError(
      "file",
      `neither OTLP protobuf (${protobufError.message}) nor JSON (${err.message})`,
    );
  }
}
