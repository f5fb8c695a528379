/**
 * A task that runs one at a time. Asked for while it runs, it runs once more after the current
 * run (which may have passed the change that prompted the ask), however often it was asked.
 */
export class SerialTask {
  private running: Promise<void> | null = null;
  private again = false;

  /** `stopped`: checked before each further run. */
  constructor(
    private readonly task: () => Promise<void>,
    private readonly stopped: () => boolean,
  ) {}

  /** Resolves once a run that started after this call has finished. */
  run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.task();
      } while (this.again && !this.stopped());
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** The run under way, if any. */
  get current(): Promise<void> | null {
    return this.running;
  }
}
