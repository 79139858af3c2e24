/**
 * Capture and episode ids become file names and index keys, so they are
 * validated: 1 to 128 characters from `A-Z a-z 0-9 _ . -`, starting with a
 * letter, digit or `_`, and never containing `..`.
 *
 * @module
 */

/** Longest id accepted. */
export const MAX_ID_LENGTH = 128;

const ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** A capture or episode id that cannot be used. */
export class InvalidIdError extends TypeError {
  /** Which id: `capture` or `episode`. */
  readonly idKind: string;
  /** The rejected value. */
  readonly value: unknown;
  /**
   * Create a `InvalidIdError`.
   *
   * @param idKind `capture` or `episode`.
   * @param value The rejected value.
   * @param reason Why it was rejected.
   */
  constructor(idKind: string, value: unknown, reason: string) {
    super(
      `Invalid ${idKind} id ${
        JSON.stringify(String(value)).slice(0, 80)
      }: ${reason}; use 1-${MAX_ID_LENGTH} characters from A-Z a-z 0-9 _ . - (no "..")`,
    );
    this.name = "InvalidIdError";
    this.idKind = idKind;
    this.value = value;
  }
}

/**
 * Check an id and return it.
 *
 * @param idKind What the id names, for the message (`capture`, `episode`).
 * @param value The candidate id.
 * @returns The same id.
 * @throws {InvalidIdError} When it is not a string of the allowed shape.
 *
 * @example
 * ```ts
 * import { validateId } from "./ids.ts";
 * import { throws } from "node:assert/strict";
 * validateId("capture", "cap_2026-11-22.a");
 * throws(() => validateId("capture", "../escape"));
 * ```
 */
export function validateId(idKind: string, value: unknown): string {
  if (typeof value !== "string") {
    throw new InvalidIdError(idKind, value, "not a string");
  }
  if (value.length === 0 || value.length > MAX_ID_LENGTH) {
    throw new InvalidIdError(idKind, value, `length ${value.length}`);
  }
  if (!ID_PATTERN.test(value)) {
    throw new InvalidIdError(idKind, value, "character outside the set");
  }
  if (value.includes("..")) {
    throw new InvalidIdError(idKind, value, 'contains ".."');
  }
  if (WINDOWS_DEVICE.test(value)) {
    throw new InvalidIdError(
      idKind,
      value,
      "a Windows device name (the store must stay portable)",
    );
  }
  return value;
}

/** Names Windows reserves for devices, with or without an extension. */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;

/**
 * Whether a value is a valid id.
 *
 * @param value The candidate id.
 * @returns True when {@linkcode validateId} would accept it.
 */
export function isValidId(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 &&
    value.length <= MAX_ID_LENGTH && ID_PATTERN.test(value) &&
    !value.includes("..") && !WINDOWS_DEVICE.test(value);
}
