/**
 * grep.bin, little-endian:
 *   header (48 bytes): magic "SLGREP\0\0", then u32 version, blockSize, nDocs, nBlocks, nWords,
 *                      bitmapWords, varintBytes, vocabBytes, then padding
 *   u32 df[nWords]            blocks containing each word (words in code-unit order)
 *   u32 postStart[nWords]     high bit set: index of the word's bitmap (nBlocks bits, padded to u32);
 *                             else byte offset of its entries: per block holding the word, varint gap
 *                             from the previous block (the first from -1), varint n (chunks of the block
 *                             holding it), then which chunks: nothing if n = blockSize; else n offset
 *                             bytes, ascending, if n <= ceil(blockSize / 8); else a ceil(blockSize / 8)
 *                             byte mask (offset o is bit o & 7 of byte o >> 3)
 *   u32 vocabOff[nWords + 1]  byte offset of each word in the vocabulary blob
 *   u32 bitmaps[bitmapWords]
 *   u8  varints[varintBytes]
 *   u8  vocab[vocabBytes]     UTF-8 words, each followed by '\n'
 */
export const GREP_FILE = 'grep.bin';
export const GREP_MAGIC = 'SLGREP\0\0';
export const GREP_FORMAT_VERSION = 4;
export const HEADER_BYTES = 48;
