/**
 * Normalization and exact lineage: a capture's episodes
 * ({@linkcode loadEpisodes}) as steps with argument sources
 * ({@linkcode normalizeEpisode}), the state index, source search
 * ({@linkcode findSource}) and the path syntax sources are written in.
 *
 * The mechanism (tokenizing, the synthetic stores and node ids, the limits of
 * what counts as meaningful) stays in its files.
 *
 * @module
 */
export { loadEpisodes, type LoadEpisodesOptions } from "./episodes.ts";
export {
  type Episode,
  type ModelDecision,
  type NormEpisode,
  NormStep,
  type NormStepFields,
} from "./records.ts";
export { argLineage } from "./arg_lineage.ts";
export {
  normalizeAll,
  normalizeEpisode,
  type NormalizeOptions,
} from "./normalize.ts";
export { StateIndex, type StateIndexOptions } from "./state_index.ts";
export {
  findAllSources,
  findSource,
  type FindSourceOptions,
} from "./find_source.ts";
export { isMeaningful } from "./meaningful.ts";
export {
  formatPath,
  parsePath,
  type PathSegment,
  resolvePath,
} from "./paths.ts";
