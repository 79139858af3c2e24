/**
 * Normalization and exact lineage: episodes as steps with argument sources, the state index, source search.
 *
 * @module
 */
export {
  comparePaths,
  DEFAULT_MAX_DEPTH,
  findAllSources,
  findSource,
  type FindSourceOptions,
} from "./find_source.ts";
export {
  isMeaningful,
  MIN_STRING_LENGTH,
  SMALL_INT_LIMIT,
  type Token,
} from "./meaningful.ts";
export {
  formatPath,
  parsePath,
  type PathSegment,
  resolvePath,
} from "./paths.ts";
export { StateIndex, type StateIndexOptions } from "./state_index.ts";
export {
  type Episode,
  type ModelDecision,
  type NormEpisode,
  NormStep,
  type NormStepFields,
  refMarker,
} from "./records.ts";
export {
  argLineage,
  argumentLeaves,
  normalizeAll,
  normalizeEpisode,
  type NormalizeOptions,
  synthNodeId,
  synthStore,
} from "./normalize.ts";
export {
  CAPTURE_EPISODE,
  loadEpisodes,
  type LoadEpisodesOptions,
} from "./episodes.ts";
