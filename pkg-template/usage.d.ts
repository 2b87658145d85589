/** Counts the tokens of a text: a real tokenizer's `(text) => enc.encode(text, "all").length` (a text it throws on is estimated). */
export type Tokenizer = (text: string) => number;

/** What a wrapper kept out of the prompt, read back and added, in one shape for every integration. */
export interface UsageSnapshot {
  /** Outputs that went to storage and reached the model as a compact text. */
  outputsOffloaded: number;
  /** Characters of those outputs the model did not read (the output less its compact text). */
  charsKeptOut: number;
  /** The same, in tokens: the tokenizer's count, else characters ÷ 4. */
  tokensKeptOut: number;
  /** Calls of read_context, search_context and grep_context. */
  readsBack: number;
  charsReadBack: number;
  tokensReadBack: number;
  /** Tokens of the tool definitions the wrapper added (and text added to descriptions), sent on each model call. */
  definitionTokens: number;
  /** Model calls counted (`usage.modelCalls(n)`, or `usageOf(tools, {modelCalls})`). */
  modelCalls: number;
  /** `tokensKeptOut − tokensReadBack − definitionTokens × modelCalls`. */
  tokensSaved: number;
  /** Whether the tokens were counted by a tokenizer (`"given"`) or estimated at 4 characters a token. */
  tokenizer: "given" | "estimate";
}

export interface Usage {
  readonly tokenizer: Tokenizer | undefined;
  /** An output the model would have read as `full` went to storage; it read `shown` instead (texts, or numbers of characters). */
  offloaded(full: string | number, shown?: string | number): void;
  /** A retrieval tool answered with `text` (or that many characters). */
  readBack(text: string | number): void;
  /** The definitions the wrapper added, as sent to the model. */
  definitions(texts: Iterable<string>): void;
  /** `n` (1) more model calls carried those definitions. */
  modelCalls(n?: number): void;
  snapshot(): UsageSnapshot;
}

export interface UsageOptions {
  /** A real tokenizer; without one, 4 characters a token (close on prose and code, 30–50% low on JSON and numbers). */
  tokenizer?: Tokenizer;
}

/** 4: the estimate's characters a token, as `maxTokens` budgets estimate. */
export const BYTES_PER_TOKEN: 4;
export const USAGE_KEYS: readonly (keyof Omit<UsageSnapshot, "tokenizer">)[];

/** A new tally. */
export function createUsage(options?: UsageOptions): Usage;

/** The sum of several snapshots; `modelCalls`, when given, replaces their counts. */
export function sumUsage(snapshots: Iterable<UsageSnapshot>, modelCalls?: number): UsageSnapshot;
