"""Xapian and bm25s as peers in bench/search.ts: build an index from the benchmark's JSONL corpus and
run its queries, timed the way sleuth's are (one warm-up pass of at most 30 s, then up to 60 s of
queries one after another on one thread, top 10). Prints one JSON line.

  python3 bench/peers/py_bench.py xapian|bm25s build CORPUS INDEX_DIR STOPWORDS_FILE
  python3 bench/peers/py_bench.py xapian|bm25s query QUERIES INDEX_DIR STOPWORDS_FILE TOP_OUT

Analysis matched to sleuth's: lower case, sleuth's stopwords (STOPWORDS_FILE, one a line), Snowball
English (Porter2); title and text one field. Xapian: TermGenerator with STEM_ALL (stemmed terms only),
BM25Weight k1=1.5 b=0.75 (k2=0, k3=1, min_normlen 0.5: Xapian's BM25 has no +1 in its idf). bm25s:
its tokenizer with sleuth's word pattern (BM25S_TOKEN_PATTERN) and PyStemmer, method 'lucene',
k1=1.5 b=0.75.
"""
import json
import os
import resource
import sys
import time


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dir_mb(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total / 1e6


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def timed(queries, run):
    """Warm-up pass (at most 30 s), then up to 60 s of queries: qps, p50, p99 and each query's top ids."""
    warm = time.perf_counter()
    for q in queries:
        run(q)
        if time.perf_counter() - warm > 30:
            break
    lat, tops = [], []
    start = time.perf_counter()
    for q in queries:
        t = time.perf_counter()
        ids = run(q)
        lat.append((time.perf_counter() - t) * 1000)
        tops.append(ids)
        if time.perf_counter() - start > 60:
            break
    total = time.perf_counter() - start
    s = sorted(lat)
    pick = lambda p: s[min(len(s) - 1, int(p * len(s)))]
    return {"qps": len(lat) / total, "p50_ms": pick(0.5), "p99_ms": pick(0.99)}, tops


def xapian_engine(mode, path, index, stopwords, top_out):
    import xapian

    stopper = xapian.SimpleStopper()
    for w in stopwords:
        stopper.add(w)
    stem = xapian.Stem("english")
    weight = lambda: xapian.BM25Weight(1.5, 0, 1, 0.75, 0.5)
    version = xapian.version_string()
    if mode == "build":
        t0 = time.perf_counter()
        db = xapian.WritableDatabase(index, xapian.DB_CREATE_OR_OVERWRITE)
        tg = xapian.TermGenerator()
        tg.set_stemmer(stem)
        tg.set_stopper(stopper)
        tg.set_stopper_strategy(xapian.TermGenerator.STOP_ALL)
        tg.set_stemming_strategy(xapian.TermGenerator.STEM_ALL)
        db.begin_transaction(False)
        for n, c in enumerate(read_jsonl(path)):
            doc = xapian.Document()
            tg.set_document(doc)
            tg.index_text(c["title"] + "\n" + c["text"])
            doc.set_data(c["id"])
            db.add_document(doc)
            if n % 100000 == 99999:
                db.commit_transaction()
                db.begin_transaction(False)
        db.commit_transaction()
        db.close()
        return {"build_s": time.perf_counter() - t0, "peak_rss_mb": peak_rss_mb(), "index_mb": dir_mb(index), "version": version}
    queries = [q["query"] for q in read_jsonl(path)]
    t0 = time.perf_counter()
    db = xapian.Database(index)
    enquire = xapian.Enquire(db)
    enquire.set_weighting_scheme(weight())
    load_s = time.perf_counter() - t0
    tg = xapian.TermGenerator()
    tg.set_stemmer(stem)
    tg.set_stopper(stopper)
    tg.set_stopper_strategy(xapian.TermGenerator.STOP_ALL)
    tg.set_stemming_strategy(xapian.TermGenerator.STEM_ALL)
    parsed = []
    for q in queries:
        # The query's terms analyzed exactly as the documents were (a scratch document), OR-ed.
        scratch = xapian.Document()
        tg.set_document(scratch)
        tg.index_text(q)
        parsed.append(xapian.Query(xapian.Query.OP_OR, [t.term for t in scratch.termlist()]))

    def run(query):
        enquire.set_query(query)
        return [m.document.get_data().decode() for m in enquire.get_mset(0, 10)]

    stats, tops = timed(parsed, run)
    return {"load_s": load_s, **stats, "peak_rss_mb": peak_rss_mb(), "version": version}, tops


# sleuth's words (src/search/tokenize.ts): runs of letters and digits, one character or more, joined
# by apostrophes ("o'neill", "kiss's", which the stemmer then treats as possessive); bm25s's own
# pattern keeps only words of two or more characters and splits at apostrophes. Curly apostrophes
# are folded to ASCII first, as sleuth's analyzer does.
BM25S_TOKEN_PATTERN = r"(?u)[^\W_]+(?:'[^\W_]+)*"


def fold_apostrophes(text):
    return text.replace("\u2019", "'").replace("\u02bc", "'")


def bm25s_engine(mode, path, index, stopwords, top_out):
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    if mode == "build":
        t0 = time.perf_counter()
        ids, texts = [], []
        for c in read_jsonl(path):
            ids.append(c["id"])
            texts.append(fold_apostrophes(c["title"] + "\n" + c["text"]))
        tokens = bm25s.tokenize(texts, token_pattern=BM25S_TOKEN_PATTERN, stopwords=stopwords, stemmer=stemmer, show_progress=False)
        del texts
        model = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
        model.index(tokens, show_progress=False)
        model.save(index, corpus=[{"id": i} for i in ids])
        return {"build_s": time.perf_counter() - t0, "peak_rss_mb": peak_rss_mb(), "index_mb": dir_mb(index), "version": bm25s.__version__}
    queries = [q["query"] for q in read_jsonl(path)]
    t0 = time.perf_counter()
    model = bm25s.BM25.load(index, load_corpus=True, mmap=False)
    load_s = time.perf_counter() - t0

    def run(query):
        q = bm25s.tokenize([fold_apostrophes(query)], token_pattern=BM25S_TOKEN_PATTERN, stopwords=stopwords, stemmer=stemmer, show_progress=False)
        if not q.vocab:
            return []
        docs, _ = model.retrieve(q, k=10, show_progress=False, n_threads=1)
        return [d["id"] for d in docs[0]]

    stats, tops = timed(queries, run)
    return {"load_s": load_s, **stats, "peak_rss_mb": peak_rss_mb(), "version": bm25s.__version__}, tops


def main():
    engine, mode, path, index, stopwords_file = sys.argv[1:6]
    top_out = sys.argv[6] if len(sys.argv) > 6 else None
    with open(stopwords_file, encoding="utf-8") as f:
        stopwords = [w.strip() for w in f if w.strip()]
    run = {"xapian": xapian_engine, "bm25s": bm25s_engine}[engine]
    result = run(mode, path, index, stopwords, top_out)
    if mode == "query":
        result, tops = result
        with open(top_out, "w", encoding="utf-8") as f:
            for ids in tops:
                f.write(json.dumps(ids) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
