type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/** Polls a condition until it holds or the deadline passes; never a fixed sleep. */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  {
    timeoutMs = 20_000,
    intervalMs = 50,
    message = 'condition',
  }: {
    timeoutMs?: number;
    intervalMs?: number;
    /** A function is called at the deadline: say, the output of a daemon so far. */
    message?: string | (() => string);
  } = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as Truthy<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${typeof message === 'function' ? message() : message}${last ? `: ${String(last)}` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
