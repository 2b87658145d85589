// Waiting between the attempts of a retry (busy files, contended locks, flaky servers).

/** Resolves after `ms` milliseconds. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
