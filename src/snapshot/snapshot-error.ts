// The error of a snapshot that cannot be served: missing, corrupt, partly written or of another format.
export class SnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SnapshotError";
  }
}
