/*
 * vsched-tbb-flow -- the peer of vsched-sched-bench: the same DAG in
 * oneTBB flow_graph, one measurement per process.
 *
 *     vsched-tbb-flow [--files N] [--threads T] [--strides 7,14,21]
 *                     [--gate artifact|analysis]
 *
 * N files x 3 continue_nodes (Source, Analysis, Artifact) with edges
 * Source(i) -> Analysis(i) -> Artifact(i) and, for each stride s <= i,
 * Analysis(i-s) -> Artifact(i) (--gate artifact, the default), or
 * Analysis(i-s) -> Analysis(i) (--gate analysis: the edges vsched itself
 * builds for blockers). Bodies only count their run, and an Artifact body
 * checks that its blockers' Analysis ran, as vsched-sched-bench's
 * executor does. The timed region: global_control
 * (max_allowed_parallelism = T), the graph, every node and edge, a
 * try_put into every Source node, wait_for_all. Teardown is timed
 * separately.
 *
 * Prints one line in vsched-sched-bench's format, "tbb files=N ...
 * nodes=X" (X: node bodies run, 3N when correct), and exits 0 only when
 * every node ran exactly once in order; 1 otherwise, 2 on usage errors.
 */
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>

namespace
{

namespace flow = tbb::flow;
using node = flow::continue_node<flow::continue_msg>;

struct options {
    std::size_t files = 10000;
    unsigned threads = 2;
    std::vector<std::size_t> strides{7, 14, 21};
    bool gate_analysis = false;
};

// Run counters, three per file (Source, Analysis, Artifact), and order
// violations; shared by every body.
struct counters {
    std::unique_ptr<std::atomic<unsigned char>[]> runs;
    std::atomic<unsigned long> violations{0};
    const options *o = nullptr;

    void bump(std::size_t k) const
    {
        unsigned char v = runs[k].load(std::memory_order_relaxed);
        runs[k].store(static_cast<unsigned char>(v + 1),
                      std::memory_order_relaxed);
    }
};

struct stage_body {
    counters *c;
    std::size_t k; // counter index: 3 * file + stage
    flow::continue_msg operator()(const flow::continue_msg &) const
    {
        c->bump(k);
        return flow::continue_msg();
    }
};

struct artifact_body {
    counters *c;
    std::size_t i; // file index
    flow::continue_msg operator()(const flow::continue_msg &) const
    {
        c->bump(3 * i + 2);
        for (std::size_t s : c->o->strides)
            if (s <= i &&
                c->runs[3 * (i - s) + 1].load(std::memory_order_relaxed) == 0)
                c->violations.fetch_add(1);
        return flow::continue_msg();
    }
};

double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
        .count();
}

long peak_rss_kb()
{
    std::FILE *f = std::fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f != nullptr && std::fgets(line, sizeof line, f) != nullptr)
        if (std::strncmp(line, "VmHWM:", 6) == 0)
            kb = std::strtol(line + 6, nullptr, 10);
    if (f != nullptr)
        std::fclose(f);
    return kb;
}

bool parse_number(const char *v, unsigned long long max,
                  unsigned long long &out)
{
    char *end = nullptr;
    out = std::strtoull(v, &end, 10);
    return *v != '\0' && *end == '\0' && out > 0 && out <= max;
}

bool parse_strides(const char *v, std::vector<std::size_t> &out)
{
    out.clear();
    for (const char *p = v; *p != '\0';) {
        char *end = nullptr;
        unsigned long long s = std::strtoull(p, &end, 10);
        if (end == p || s == 0 || (*end != ',' && *end != '\0'))
            return false;
        out.push_back(static_cast<std::size_t>(s));
        p = *end == ',' ? end + 1 : end;
    }
    return true;
}

bool parse(int argc, char **argv, options &o)
{
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            return false;
        std::string a = argv[i];
        const char *v = argv[++i];
        unsigned long long n = 0;
        if (a == "--files" && parse_number(v, 100000000ull, n))
            o.files = static_cast<std::size_t>(n);
        else if (a == "--threads" && parse_number(v, 1024, n))
            o.threads = static_cast<unsigned>(n);
        else if (a == "--strides" && parse_strides(v, o.strides))
            ;
        else if (a == "--gate" && (std::strcmp(v, "artifact") == 0 ||
                                   std::strcmp(v, "analysis") == 0))
            o.gate_analysis = std::strcmp(v, "analysis") == 0;
        else
            return false;
    }
    return true;
}

// The graph and its nodes; destroying it is the teardown.
struct dag {
    flow::graph g;
    std::vector<node> nodes; // destroyed before g
};

// Build the graph, run it, and wait until every node has run.
void run(const options &o, counters &c, dag &d)
{
    std::vector<node> &nodes = d.nodes;
    nodes.reserve(3 * o.files);
    for (std::size_t i = 0; i < o.files; i++) {
        nodes.emplace_back(d.g, stage_body{&c, 3 * i});
        nodes.emplace_back(d.g, stage_body{&c, 3 * i + 1});
        nodes.emplace_back(d.g, artifact_body{&c, i});
        flow::make_edge(nodes[3 * i], nodes[3 * i + 1]);
        flow::make_edge(nodes[3 * i + 1], nodes[3 * i + 2]);
        for (std::size_t s : o.strides)
            if (s <= i)
                flow::make_edge(nodes[3 * (i - s) + 1],
                                nodes[3 * i + (o.gate_analysis ? 1 : 2)]);
    }
    for (std::size_t i = 0; i < o.files; i++)
        nodes[3 * i].try_put(flow::continue_msg());
    d.g.wait_for_all();
}

} // namespace

int main(int argc, char **argv)
{
    options o;
    if (!parse(argc, argv, o)) {
        std::fputs("usage: vsched-tbb-flow [--files N] [--threads T] "
                   "[--strides LIST] [--gate artifact|analysis]\n",
                   stderr);
        return 2;
    }
    counters c;
    c.runs.reset(new std::atomic<unsigned char>[3 * o.files]());
    c.o = &o;

    auto t0 = std::chrono::steady_clock::now();
    double wall = 0, teardown = 0;
    {
        tbb::global_control gc(tbb::global_control::max_allowed_parallelism,
                               o.threads);
        auto d = std::make_unique<dag>();
        run(o, c, *d);
        wall = seconds_since(t0);
        auto t1 = std::chrono::steady_clock::now();
        d.reset();
        teardown = seconds_since(t1);
    }

    std::size_t total = 0, bad = 0;
    for (std::size_t k = 0; k < 3 * o.files; k++) {
        unsigned r = c.runs[k].load(std::memory_order_relaxed);
        total += r;
        bad += r != 1;
    }
    long kb = peak_rss_kb();
    std::printf("tbb files=%zu threads=%u wall_s=%.6f teardown_s=%.6f "
                "peak_rss_kb=%ld rss_per_file_b=%.1f nodes=%zu\n",
                o.files, o.threads, wall, teardown, kb,
                static_cast<double>(kb) * 1024.0 /
                    static_cast<double>(o.files),
                total);
    if (bad != 0 || c.violations.load() != 0) {
        std::fprintf(stderr,
                     "vsched-tbb-flow: %zu nodes did not run exactly once, "
                     "%lu artifacts ran before a blocker's analysis\n",
                     bad, c.violations.load());
        return 1;
    }
    return 0;
}
