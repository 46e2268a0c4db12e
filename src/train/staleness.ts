/**
 * Bounded off-policy sampling (TrainConfig.maxStaleness = k): up to k batches are sampled ahead,
 * each starting as soon as the one before it is done and with the newest weights at that moment, so
 * sampling step n + 1 overlaps training step n. A batch is then up to k steps stale; the importance
 * ratio against the sampler's own logprobs corrects for it. k = 0: each step samples, then trains.
 */
export class SamplingPipeline<B> {
  private readonly ahead: Promise<B>[] = [];
  /** The tail of the chain: batches are sampled one after another, never two at once. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly maxStaleness: number,
    private readonly sampleFor: (step: number) => Promise<B>,
  ) {}

  /**
   * The batch of `step`: the one sampled ahead for it, or sampled now; then sampling starts for the
   * steps after it, up to maxStaleness ahead and at most `lastStep`.
   */
  take(step: number, lastStep: number): Promise<B> {
    const batch = this.ahead.shift() ?? this.chain(step);
    const queued = this.ahead.length;
    for (let s = step + 1 + queued; s <= Math.min(lastStep, step + this.maxStaleness); s++) this.ahead.push(this.chain(s));
    return batch;
  }

  private chain(step: number): Promise<B> {
    const p = this.tail.then(() => this.sampleFor(step));
    this.tail = p.catch(() => undefined);
    return p;
  }
}
