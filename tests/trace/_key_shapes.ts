/**
 * Fake keys in model providers' shapes (issue 44), shared by the redaction
 * tests: each with the rule name it is counted by.
 *
 * @module
 */

const A = "A1b2C3d4E5";
export const HEX = "9f86d081884c7d659a2feaa0c55ad015";
const B62 = "Zq9xW2vT7uR4pL6mN8kJ3hG5fD1sA0bC";

/** Fake keys in each provider's shape, and the name they are counted by. */
export const PROVIDER_KEYS: [string, string][] = [
  [`gsk_${A.repeat(5)}Xy`, "groq_key"],
  [`xai-${A.repeat(8)}`, "xai_key"],
  [`pplx-${A.repeat(4)}abcdefgh`, "perplexity_key"],
  [`r8_${A.repeat(3)}abcdefg`, "replicate_token"],
  [
    `${A.repeat(5)}ab` + "JQQJ99" + "B" + "C" + A + "abcdef" + "E" + "F6g7h8j",
    "azure_key",
  ],
];

/** Keys of no prefix, each after the label that makes it one. */
export const LABELLED_KEYS: [string, string, string][] = [
  [`my Azure OpenAI key is ${HEX}`, HEX, "azure_key"],
  [`api-key ${HEX.toUpperCase()}`, HEX.toUpperCase(), "azure_key"],
  [`the api key: ${HEX}, endpoint east-us`, HEX, "azure_key"],
  [`Ocp-Apim-Subscription-Key=${HEX}`, HEX, "azure_key"],
  [`here is my Mistral API key ${B62} thanks`, B62, "mistral_key"],
];
