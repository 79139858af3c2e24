/**
 * The tool gateway: wrap an agent's own tools so every call is recorded, and the sinks that send events to a store or an ingest server.
 *
 * @module
 */
export {
  type AnyFn,
  type EnvironmentAdapter,
  parameterNames,
  ToolGateway,
  type ToolGatewayOptions,
  type WrapOptions,
} from "./tool_gateway.ts";
export {
  type EventSink,
  HttpTraceSink,
  type HttpTraceSinkOptions,
} from "./event_sink.ts";
export { openRecordingSink, type RecordingSink } from "./open_sink.ts";
export {
  type DeclaredTool,
  declareTool,
  readParameters,
  ToolBindingError,
  type ToolParams,
} from "./parameters.ts";
