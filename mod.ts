/**
 * harness: record what AI agents do as canonical, hash-chained trace events,
 * and compile what they do repeatedly into deterministic, verified behavior.
 *
 * This module is what an agent written in Deno needs: record its tool calls
 * (a gateway and a sink), control captures, compile, and run a package. It
 * has no side effects on import. Each area has its own entry point as well:
 * `./trace`, `./store`, `./adapters`, `./ingest`, `./control`, `./gateway`,
 * `./lineage`, `./compiler`, `./runtime`, `./proxy`, `./team`, `./otel`,
 * `./models`.
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
  type EnvironmentAdapter,
  HttpTraceSink,
  type HttpTraceSinkOptions,
  openRecordingSink,
  type RecordingSink,
  ToolGateway,
  type ToolGatewayOptions,
  type WrapOptions,
} from "./lib/gateway/mod.ts";
export type { EventSink } from "./lib/gateway/mod.ts";
export { declareTool, ToolBindingError } from "./lib/gateway/mod.ts";
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
  explainPackage,
} from "./lib/compiler/mod.ts";
export {
  AgentSession,
  type AgentSessionOptions,
  BehaviorRuntime,
  ChoiceRefusedError,
  loadPackage,
  MissingCapabilityError,
  type ModelBinding,
  PackageError,
  type RunResult,
  type ToolRegistry,
  validatePackage,
} from "./lib/runtime/mod.ts";
