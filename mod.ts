/**
 * harness: record what AI agents do as canonical, hash-chained trace events,
 * and compile what they do repeatedly into deterministic, verified behavior.
 *
 * This module is what an agent written in Deno needs: record its tool calls
 * (a gateway and a sink), the events it emits itself, the store, control
 * captures, compile, and run a package in either form. It has no side
 * effects on import. The types these take and return beyond the main ones
 * are on the area's own entry point. Each area has its own entry point as well:
 * `./trace`, `./store`, `./adapters`, `./ingest`, `./control`, `./gateway`,
 * `./lineage`, `./package`, `./compiler`, `./forms` (`./runtime`, its
 * deprecated alias), `./proxy`, `./team`, `./otel`, `./models`.
 *
 * @example Record two events and verify the chain
 * ```ts
 * import { annotation, HarnessStore } from "./mod.ts";
 * const root = await Deno.makeTempDir();
 * const store = new HarnessStore(root);
 * const sink = store.sink("cap_demo");
 * const ctx = {
 *   captureId: "cap_demo",
 *   episodeId: "ep_1",
 *   source: { host: "harness", adapter: "example", model: null },
 * };
 * sink.emit(annotation(ctx, { type: "note", text: "hello" }));
 * sink.emit(annotation(ctx, { type: "note", text: "world" }));
 * const report = await store.verifyCapture("cap_demo");
 * import { strictEqual } from "node:assert/strict";
 * strictEqual(report.ok, true);
 * strictEqual(report.events, 2);
 * store.close();
 * await Deno.remove(root, { recursive: true });
 * ```
 *
 * @module
 */

export {
  declareTool,
  ToolBindingError,
  ToolGateway,
  type ToolGatewayOptions,
} from "./lib/tool_gateway/mod.ts";
export {
  type EventSink,
  HttpTraceSink,
  openRecordingSink,
  type RecordingSink,
} from "./lib/tool_gateway/mod.ts";
export {
  annotation,
  type EventContext,
  message,
  type TraceEvent,
  type UnsealedEvent,
} from "./lib/trace/mod.ts";
export { HarnessStore, type HarnessStoreOptions } from "./lib/store/mod.ts";
export { CaptureCoordinator } from "./lib/control/mod.ts";
export {
  type BehaviorPackage,
  compileBehavior,
  type CompileOptions,
  type CompileResult,
} from "./lib/compiler/mod.ts";
export {
  loadPackage,
  type PackageCapabilities,
  PackageError,
  runPackage,
  type RunPackageOptions,
} from "./lib/forms/mod.ts";
