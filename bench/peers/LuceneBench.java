// Lucene as a peer in bench/search.ts: builds an index from the benchmark's JSONL corpus and runs its
// queries, timed the way sleuth's are (one warm-up pass of at most 30 s, then up to 60 s of queries
// one after another on one thread, top 10). Run with Java's source launcher, no build step:
//
//   java -cp /usr/share/java/lucene-core-*.jar:/usr/share/java/lucene-analyzers-common-*.jar \
//     bench/peers/LuceneBench.java build|query CORPUS_OR_QUERIES INDEX_DIR ANALYSIS STOPWORDS_FILE THREADS TOP_OUT
//
// ANALYSIS 'matched': StandardTokenizer, lower case, sleuth's stopwords (STOPWORDS_FILE, one a line),
// Snowball English (Porter2, sleuth's stemmer), BM25 k1=1.5 b=0.75 (sleuth's defaults). 'english':
// Lucene's EnglishAnalyzer as it comes (its stopwords, possessives, Porter) with BM25's defaults.
// Title and text are one field, as sleuth indexes them. The build uses THREADS indexing threads and
// merges to one segment (sleuth's index is one segment at this size). Prints one JSON line.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.lucene.analysis.*;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.snowball.SnowballFilter;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.*;
import org.apache.lucene.util.Version;
import org.tartarus.snowball.ext.EnglishStemmer;

public class LuceneBench {
  static Analyzer analyzer(String analysis, String stopwordsFile) throws IOException {
    if (analysis.equals("english")) return new EnglishAnalyzer();
    CharArraySet stop = new CharArraySet(Files.readAllLines(Paths.get(stopwordsFile), StandardCharsets.UTF_8), false);
    return new Analyzer() {
      @Override
      protected TokenStreamComponents createComponents(String field) {
        Tokenizer source = new StandardTokenizer();
        TokenStream s = new LowerCaseFilter(source);
        s = new StopFilter(s, stop);
        s = new SnowballFilter(s, new EnglishStemmer());
        return new TokenStreamComponents(source, s);
      }
    };
  }

  static BM25Similarity similarity(String analysis) {
    return analysis.equals("english") ? new BM25Similarity() : new BM25Similarity(1.5f, 0.75f);
  }

  /** The string value of `key` in a JSON object line (the corpus is JSON.stringify output). */
  static String field(String line, String key) {
    String k = "\"" + key + "\":";
    int at = line.indexOf(k);
    if (at < 0) return "";
    int i = at + k.length();
    while (line.charAt(i) == ' ') i++;
    if (line.charAt(i) != '"') throw new IllegalArgumentException("field " + key + " is not a string");
    StringBuilder out = new StringBuilder();
    for (i++; ; i++) {
      char c = line.charAt(i);
      if (c == '"') return out.toString();
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char e = line.charAt(++i);
      switch (e) {
        case 'n': out.append('\n'); break;
        case 't': out.append('\t'); break;
        case 'r': out.append('\r'); break;
        case 'b': out.append('\b'); break;
        case 'f': out.append('\f'); break;
        case 'u': out.append((char) Integer.parseInt(line.substring(i + 1, i + 5), 16)); i += 4; break;
        default: out.append(e);
      }
    }
  }

  static long peakRssKb() throws IOException {
    for (String l : Files.readAllLines(Paths.get("/proc/self/status")))
      if (l.startsWith("VmHWM:")) return Long.parseLong(l.replaceAll("[^0-9]", ""));
    return -1;
  }

  static long dirBytes(Path dir) throws IOException {
    try (var s = Files.list(dir)) {
      return s.mapToLong(p -> p.toFile().length()).sum();
    }
  }

  public static void main(String[] args) throws Exception {
    String mode = args[0], input = args[1], indexDir = args[2], analysis = args[3], stopwords = args[4];
    int threads = Integer.parseInt(args[5]);
    String topOut = args[6];
    Analyzer an = analyzer(analysis, stopwords);
    if (mode.equals("build")) {
      long t0 = System.nanoTime();
      IndexWriterConfig cfg = new IndexWriterConfig(an).setSimilarity(similarity(analysis)).setRAMBufferSizeMB(512).setOpenMode(IndexWriterConfig.OpenMode.CREATE);
      try (FSDirectory dir = FSDirectory.open(Paths.get(indexDir)); IndexWriter w = new IndexWriter(dir, cfg);
           BufferedReader r = Files.newBufferedReader(Paths.get(input), StandardCharsets.UTF_8)) {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        BlockingQueue<List<String>> queue = new ArrayBlockingQueue<>(4 * threads);
        List<Future<?>> workers = new ArrayList<>();
        final List<String> END = new ArrayList<>();
        for (int k = 0; k < threads; k++) workers.add(pool.submit(() -> {
          for (;;) {
            List<String> batch = queue.take();
            if (batch == END) return null;
            for (String line : batch) {
              Document d = new Document();
              d.add(new StringField("id", field(line, "id"), Field.Store.YES));
              d.add(new TextField("body", field(line, "title") + "\n" + field(line, "text"), Field.Store.NO));
              w.addDocument(d);
            }
          }
        }));
        List<String> batch = new ArrayList<>();
        for (String line; (line = r.readLine()) != null; ) {
          if (line.isBlank()) continue;
          batch.add(line);
          if (batch.size() == 1000) {
            queue.put(batch);
            batch = new ArrayList<>();
          }
        }
        queue.put(batch);
        for (int k = 0; k < threads; k++) queue.put(END);
        for (Future<?> f : workers) f.get();
        pool.shutdown();
        w.forceMerge(1);
        w.commit();
      }
      double buildS = (System.nanoTime() - t0) / 1e9;
      System.out.printf(Locale.ROOT, "{\"build_s\":%.3f,\"peak_rss_mb\":%.1f,\"index_mb\":%.1f,\"version\":\"%s\"}%n", buildS, peakRssKb() / 1024.0, dirBytes(Paths.get(indexDir)) / 1e6, Version.LATEST);
      return;
    }
    List<String> queries = new ArrayList<>();
    for (String line : Files.readAllLines(Paths.get(input), StandardCharsets.UTF_8)) if (!line.isBlank()) queries.add(field(line, "query"));
    long t0 = System.nanoTime();
    DirectoryReader reader = DirectoryReader.open(MMapDirectory.open(Paths.get(indexDir)));
    IndexSearcher searcher = new IndexSearcher(reader);
    searcher.setSimilarity(similarity(analysis));
    double loadS = (System.nanoTime() - t0) / 1e9;
    List<Query> parsed = new ArrayList<>();
    for (String q : queries) {
      // The query's distinct terms, analyzed as the documents were, OR-ed: what sleuth scores.
      LinkedHashSet<String> terms = new LinkedHashSet<>();
      try (TokenStream ts = an.tokenStream("body", q)) {
        CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
        ts.reset();
        while (ts.incrementToken()) terms.add(term.toString());
        ts.end();
      }
      BooleanQuery.Builder b = new BooleanQuery.Builder();
      for (String t : terms) b.add(new TermQuery(new Term("body", t)), BooleanClause.Occur.SHOULD);
      parsed.add(b.build());
    }
    long warm = System.nanoTime();
    for (Query q : parsed) {
      searcher.search(q, 10);
      if (System.nanoTime() - warm > 30e9) break;
    }
    List<Double> lat = new ArrayList<>();
    List<String> tops = new ArrayList<>();
    long start = System.nanoTime();
    for (Query q : parsed) {
      long t = System.nanoTime();
      TopDocs top = searcher.search(q, 10);
      lat.add((System.nanoTime() - t) / 1e6);
      StringBuilder ids = new StringBuilder("[");
      for (ScoreDoc sd : top.scoreDocs) {
        if (ids.length() > 1) ids.append(',');
        ids.append('"').append(searcher.doc(sd.doc).get("id")).append('"');
      }
      tops.add(ids.append(']').toString());
      if (System.nanoTime() - start > 60e9) break;
    }
    double total = (System.nanoTime() - start) / 1e9;
    Files.write(Paths.get(topOut), tops, StandardCharsets.UTF_8);
    List<Double> sorted = new ArrayList<>(lat);
    Collections.sort(sorted);
    double p50 = sorted.get(Math.min(sorted.size() - 1, (int) Math.floor(0.5 * sorted.size())));
    double p99 = sorted.get(Math.min(sorted.size() - 1, (int) Math.floor(0.99 * sorted.size())));
    System.out.printf(Locale.ROOT, "{\"load_s\":%.3f,\"qps\":%.3f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"peak_rss_mb\":%.1f,\"version\":\"%s\"}%n", loadS, lat.size() / total, p50, p99, peakRssKb() / 1024.0, Version.LATEST);
  }
}
