import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet';
import { InputError } from '../errors.js';

/** Column names tried, in order, for the chunk id and the text of a Harness-1 style corpus. */
const ID_COLUMNS = ['chunk_id', 'id', 'doc_id', 'document_id', '_id', 'docid'];
const TEXT_COLUMNS = ['text', 'chunk_text', 'content', 'contents', 'document', 'body'];

export interface ParquetRowGroup {
  rows: Record<string, unknown>[];
  /** 0-based row index in the file of rows[0]. */
  first: number;
  columns: { id: string; text: string; title?: string };
}

/**
 * Rows of a Parquet file, a row group at a time, so memory holds one row group, not the file.
 * The id and text columns are found by name (ID_COLUMNS, TEXT_COLUMNS); `title` is used if present.
 */
export async function* readParquetRowGroups(path: string, onBytes?: (bytes: number) => void): AsyncGenerator<ParquetRowGroup> {
  const file = await asyncBufferFromFile(path);
  let metadata;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (err) {
    throw new InputError(`${path}: not a readable Parquet file (${(err as Error).message})`);
  }
  const names = parquetSchema(metadata).children.map((c) => c.element.name);
  const id = ID_COLUMNS.find((c) => names.includes(c));
  const text = TEXT_COLUMNS.find((c) => names.includes(c));
  if (!id || !text) {
    throw new InputError(`${path}: Parquet corpus needs a chunk id column (${ID_COLUMNS.join(', ')}) and a text column (${TEXT_COLUMNS.join(', ')}); it has ${names.join(', ')}`);
  }
  const columns = { id, text, ...(names.includes('title') ? { title: 'title' } : {}) };
  let rowStart = 0;
  let bytes = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd });
    } catch (err) {
      throw new InputError(`${path}: cannot decode Parquet rows ${rowStart + 1}-${rowEnd} (${(err as Error).message})`);
    }
    yield { rows, first: rowStart, columns };
    rowStart = rowEnd;
    bytes += Number(group.total_compressed_size ?? group.total_byte_size);
    onBytes?.(Math.min(bytes, file.byteLength));
  }
}
