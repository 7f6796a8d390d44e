/* cmd_cluster_train_dqn.c - 'hsdag cluster train --algo dqn': trains the PAC-ML Q-network with DQN for one
 *   beta distribution; writes DIR/curve.csv and DIR/policy.bin (the best greedy evaluation so far).
 * Not here: the Q-network, replay and trainer (src/learn/pacml_dqn.c), the features (src/cluster/pacml_env.c),
 *   PPO training (cmd_cluster_train.c). Evaluation is 'hsdag cluster run --policy learned:DIR'.
 * Entry points: cmd_cluster_train_dqn (argv[0] = "train"; called by cmd_cluster_train for --algo dqn).
 */
#include "cluster_train.h"
#include "hsdag/cluster.h"
#include "hsdag/io.h"
#include "hsdag/pacml.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

static const char *cq_help[] = {
    "usage: hsdag cluster train --algo dqn --beta A|B|C|D --seed S --out DIR [options]\n"
    "\n"
    "Trains the PAC-ML Q-network (the spec's GNN and graph module, plus per-decision and per-action "
    "features\n"
    "of the cluster's occupancy: docs/pacml-learning.md) with DQN: epsilon-greedy episodes of 1001 jobs,\n"
    "n-step double-Q targets from a target network, a prioritised replay buffer and Adam. Each iteration is\n"
    "--episodes training episodes and a greedy evaluation on seeds 1799..; the best network so far is\n"
    "DIR/policy.bin. Training episodes use seeds derived from --seed (never 0, 1, 2 or 1799+). "
    "Deterministic:\n"
    "the same options give the same curve and policy (wall_s aside). There is no --resume for DQN.\n"
    "Evaluate with: hsdag cluster run --policy learned:DIR --beta X --seed S\n"
    "\n",
    "  --beta X            JCT requirement distribution to train on (default A)\n"
    "  --seed S            seed of the weights, exploration, replay sampling and episodes (default 0)\n"
    "  --out DIR           output directory (created); refuses to overwrite an existing DIR/policy.bin\n"
    "  --iterations N      iterations (default 100)\n"
    "  --episodes N        training episodes per iteration (default 20)\n"
    "  --eval-episodes N   greedy evaluation episodes per iteration (default 5)\n"
    "  --gamma X           discount per decision (default 0.99)\n"
    "  --n-step N          n-step returns (default 3)\n"
    "  --lr X              Adam learning rate (default 5e-4), decayed linearly to X * --lr-end\n"
    "  --lr-end X          final learning-rate factor (default 0.1)\n"
    "  --grad-clip X       global gradient norm clip (default 10)\n"
    "  --batch N           transitions per update (default 64)\n"
    "  --train-every N     decisions per update (default 2)\n"
    "  --replay N          replay capacity in decisions (default 100000)\n"
    "  --learning-starts N decisions before the first update (default 5000)\n"
    "  --target-every N    updates between target-network copies (default 2000)\n"
    "  --per-alpha X       prioritised replay exponent, 0 = uniform replay (default 0.6)\n"
    "  --per-beta X        importance-weight exponent at the start, annealed to 1 (default 0.4)\n"
    "  --eps-start X, --eps-end X, --eps-decay N\n"
    "                      epsilon falls linearly from X to X over N decisions (default 1, 0.02, 200000)\n"
    "  --head H1,H2        widths of the Q head's hidden layers (default 128,64)\n"
    "  --mask M            spec, place or place-jct (default place-jct: only degrees that can be placed\n"
    "                      now and meet the job's deadline, and 0)\n"
    "  --time-unit-fix     train on the simulator with communication in ms\n"
    "  --horizon T, --interarrival T\n"
    "                      episode horizon (default 1e6) and time between arrivals (default 1000)\n"
    "  --quiet             no progress bar\n"
    "  --json              print a JSON summary at the end\n"
    "  --help              this text\n"
    "\n"
    "curve.csv columns: iteration, episodes, steps, updates, train_blocking (epsilon-greedy episodes),\n"
    "eval_blocking (greedy, seeds 1799..), epsilon, loss, q_mean, lr, wall_s\n",
    NULL};

typedef struct cq_opts {
    hsdag_cluster_config cc;
    hsdag_pacml_dqn_config dc;
    int32_t iterations;
    const char *out;
    int quiet, json, help;
} cq_opts;

static int cq_parse(int argc, char **argv, cq_opts *o)
{
    static const struct option lo[] = {{"algo", 1, 0, 'A'},
                                       {"beta", 1, 0, 'b'},
                                       {"seed", 1, 0, 's'},
                                       {"out", 1, 0, 'o'},
                                       {"iterations", 1, 0, 'n'},
                                       {"episodes", 1, 0, 'E'},
                                       {"eval-episodes", 1, 0, 'V'},
                                       {"gamma", 1, 0, 'g'},
                                       {"n-step", 1, 0, 'N'},
                                       {"lr", 1, 0, 'l'},
                                       {"lr-end", 1, 0, 'L'},
                                       {"grad-clip", 1, 0, 'G'},
                                       {"batch", 1, 0, 'B'},
                                       {"train-every", 1, 0, 'T'},
                                       {"replay", 1, 0, 'r'},
                                       {"learning-starts", 1, 0, 'S'},
                                       {"target-every", 1, 0, 'U'},
                                       {"per-alpha", 1, 0, 'a'},
                                       {"per-beta", 1, 0, 'p'},
                                       {"eps-start", 1, 0, '0'},
                                       {"eps-end", 1, 0, '1'},
                                       {"eps-decay", 1, 0, '2'},
                                       {"head", 1, 0, 'W'},
                                       {"mask", 1, 0, 'M'},
                                       {"time-unit-fix", 0, 0, 'f'},
                                       {"horizon", 1, 0, 'H'},
                                       {"interarrival", 1, 0, 'i'},
                                       {"quiet", 0, 0, 'q'},
                                       {"json", 0, 0, 'j'},
                                       {"help", 0, 0, 'h'},
                                       {0, 0, 0, 0}};
    optind = 0;
    opterr = 0;
    int ch, rc = 0;
    long v;
    double d;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case 'A':
            if (strcmp(optarg, "dqn"))
                return cli_usage_error("cluster train", "--algo '%s': ppo or dqn", optarg);
            break;
        case 'b':
            if (strlen(optarg) != 1 || optarg[0] < 'A' || optarg[0] > 'D')
                return cli_usage_error("cluster train", "--beta '%s': must be A, B, C or D", optarg);
            o->cc.beta = optarg[0];
            break;
        case 's':
            if ((rc = ct_int("--seed", optarg, 0, 2147483647L, &v))) return rc;
            o->dc.seed = (uint64_t)v;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'n':
            if ((rc = ct_int("--iterations", optarg, 1, 1000000, &v))) return rc;
            o->iterations = (int32_t)v;
            break;
        case 'E':
            if ((rc = ct_int("--episodes", optarg, 1, 100000, &v))) return rc;
            o->dc.eval_every = (int32_t)v;
            break;
        case 'V':
            if ((rc = ct_int("--eval-episodes", optarg, 0, 1000, &v))) return rc;
            o->dc.eval_episodes = (int32_t)v;
            break;
        case 'g':
            if ((rc = ct_num("--gamma", optarg, 1e-3, 0.999999, &d))) return rc;
            o->dc.gamma = d;
            break;
        case 'N':
            if ((rc = ct_int("--n-step", optarg, 1, 64, &v))) return rc;
            o->dc.n_step = (int32_t)v;
            break;
        case 'l':
            if ((rc = ct_num("--lr", optarg, 1e-9, 1, &d))) return rc;
            o->dc.lr = (float)d;
            break;
        case 'L':
            if ((rc = ct_num("--lr-end", optarg, 1e-6, 1, &d))) return rc;
            o->dc.lr_end = (float)d;
            break;
        case 'G':
            if ((rc = ct_num("--grad-clip", optarg, 0, 1e6, &d))) return rc;
            o->dc.grad_clip = (float)d;
            break;
        case 'B':
            if ((rc = ct_int("--batch", optarg, 1, 65536, &v))) return rc;
            o->dc.batch = (int32_t)v;
            break;
        case 'T':
            if ((rc = ct_int("--train-every", optarg, 1, 1000000, &v))) return rc;
            o->dc.train_every = (int32_t)v;
            break;
        case 'r':
            if ((rc = ct_int("--replay", optarg, 2, 10000000, &v))) return rc;
            o->dc.replay = (int32_t)v;
            break;
        case 'S':
            if ((rc = ct_int("--learning-starts", optarg, 0, 100000000, &v))) return rc;
            o->dc.learning_starts = (int32_t)v;
            break;
        case 'U':
            if ((rc = ct_int("--target-every", optarg, 1, 100000000, &v))) return rc;
            o->dc.target_every = (int32_t)v;
            break;
        case 'a':
            if ((rc = ct_num("--per-alpha", optarg, 0, 10, &d))) return rc;
            o->dc.per_alpha = (float)d;
            break;
        case 'p':
            if ((rc = ct_num("--per-beta", optarg, 0, 1, &d))) return rc;
            o->dc.per_beta = (float)d;
            break;
        case '0':
            if ((rc = ct_num("--eps-start", optarg, 0, 1, &d))) return rc;
            o->dc.eps_start = (float)d;
            break;
        case '1':
            if ((rc = ct_num("--eps-end", optarg, 0, 1, &d))) return rc;
            o->dc.eps_end = (float)d;
            break;
        case '2':
            if ((rc = ct_int("--eps-decay", optarg, 1, 2000000000L, &v))) return rc;
            o->dc.eps_decay = v;
            break;
        case 'W': {
            long a, b;
            char extra;
            if (sscanf(optarg, "%ld,%ld%c", &a, &b, &extra) != 2 || a < 1 || a > 4096 || b < 1 || b > 4096)
                return cli_usage_error("cluster train", "--head '%s': expected H1,H2 (1..4096)", optarg);
            o->dc.net.h1 = (int32_t)a;
            o->dc.net.h2 = (int32_t)b;
            break;
        }
        case 'M': {
            hsdag_err e = {0};
            if (hsdag_pacml_mask_parse(&o->dc.net.mask_mode, optarg, &e) < 0)
                return cli_usage_error("cluster train", "--mask '%s': spec, place or place-jct", optarg);
            break;
        }
        case 'f':
            o->cc.time_unit_fix = 1;
            break;
        case 'H':
            if ((rc = ct_num("--horizon", optarg, 0, 1e15, &d))) return rc;
            o->cc.horizon = d;
            break;
        case 'i':
            if ((rc = ct_num("--interarrival", optarg, 1e-6, 1e12, &d))) return rc;
            o->cc.interarrival = d;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'h':
            o->help = 1;
            break;
        default:
            return cli_usage_error("cluster train", "--algo dqn: unknown or incomplete option '%s'",
                                   argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error("cluster train", "unexpected argument '%s'", argv[optind]);
    if (o->help) return 0;
    if (!o->out) return cli_usage_error("cluster train", "--algo dqn: --out DIR is required (no --resume)");
    if (o->cc.horizon / o->cc.interarrival > 1e7)
        return cli_usage_error("cluster train", "horizon / interarrival above 1e7 arrivals");
    if ((int64_t)o->iterations * o->dc.eval_every > 100000000)
        return cli_usage_error("cluster train", "--iterations x --episodes above 1e8 episodes");
    return 0;
}

int cmd_cluster_train_dqn(int argc, char **argv)
{
    cq_opts o;
    memset(&o, 0, sizeof o);
    o.cc = hsdag_cluster_config_default();
    o.dc = hsdag_pacml_dqn_config_default();
    o.iterations = 100;
    int rc = cq_parse(argc, argv, &o);
    if (rc) return rc;
    if (o.help) {
        for (int i = 0; cq_help[i]; i++) fputs(cq_help[i], stdout);
        return CLI_OK;
    }
    o.dc.episodes = o.iterations * o.dc.eval_every;
    hsdag_err e = {0};
    char path[4096];
    struct stat sb;
    if (snprintf(path, sizeof path, "%s/policy.bin", o.out) >= (int)sizeof path)
        return cli_usage_error("cluster train", "'%s': path too long", o.out);
    if (stat(path, &sb) == 0) {
        hsdag_err_set(&e, HSDAG_EINVAL, "%s exists: use another --out", path);
        return cli_fail("cluster train", HSDAG_EINVAL, &e);
    }
    hsdag_cluster *env = NULL;
    hsdag_pacml_dqn *t = NULL;
    hsdag_buf curve = {0}, img = {0};
    if ((rc = hsdag_cluster_create(&env, &o.cc, NULL, NULL, 0, &e)) < 0) goto fail;
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env_x(&pe, env);
    if ((rc = hsdag_pacml_dqn_create(&t, &pe, &o.dc, &e)) < 0) goto fail;
    if (mkdir(o.out, 0777) < 0 && errno != EEXIST) {
        rc = hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", o.out, strerror(errno));
        goto fail;
    }
    hsdag_buf_printf(
        &curve,
        "iteration,episodes,steps,updates,train_blocking,eval_blocking,epsilon,loss,q_mean,lr,wall_s\n");
    cli_progress pg;
    cli_progress_start(&pg, "train", o.iterations, o.quiet);
    hsdag_pacml_dqn_stats s = {0};
    while (hsdag_pacml_dqn_iteration(t) < o.iterations) {
        if ((rc = hsdag_pacml_dqn_iterate(t, &s, &e)) < 0) break;
        hsdag_buf_printf(&curve, "%d,%lld,%lld,%lld,%.6f,%.6f,%.4f,%.6g,%.5g,%.4g,%.2f\n", s.iteration,
                         (long long)s.episodes, (long long)s.steps, (long long)s.updates, s.train_blocking,
                         s.eval_blocking, s.epsilon, s.loss, s.q_mean, s.lr, s.wall_s);
        img.len = 0;
        if ((rc = hsdag_pacml_dqn_save_best(t, &img, &e)) == 0) rc = ct_write(o.out, "policy.bin", &img, &e);
        if (rc == 0) rc = ct_write(o.out, "curve.csv", &curve, &e);
        if (rc < 0) break;
        char extra[96];
        snprintf(extra, sizeof extra, "train %.3f eval %.3f best %.3f", s.train_blocking, s.eval_blocking,
                 hsdag_pacml_dqn_best(t, NULL));
        cli_progress_update(&pg, hsdag_pacml_dqn_iteration(t), extra);
    }
    cli_progress_end(&pg);
    if (rc < 0) goto fail;
    {
        int32_t bi = 0;
        double best = hsdag_pacml_dqn_best(t, &bi);
        hsdag_buf b = {0};
        if (o.json) {
            hsdag_buf_printf(
                &b,
                "{\"algo\": \"dqn\", \"beta\": \"%c\", \"seed\": %llu, \"iterations\": %d, "
                "\"episodes\": %lld, \"steps\": %lld, \"best_iteration\": %d, \"best_eval_blocking\": ",
                o.cc.beta, (unsigned long long)o.dc.seed, hsdag_pacml_dqn_iteration(t), (long long)s.episodes,
                (long long)s.steps, bi);
            if (isfinite(best))
                hsdag_buf_double(&b, best);
            else
                hsdag_buf_printf(&b, "null");
            hsdag_buf_printf(&b, ", \"wall_s\": ");
            hsdag_buf_double(&b, s.wall_s);
            hsdag_buf_printf(&b, ", \"dir\": ");
            hsdag_buf_json_str(&b, o.out);
            hsdag_buf_printf(&b, "}\n");
        } else {
            hsdag_buf_printf(
                &b,
                "trained %d iterations (%lld episodes, %lld decisions, %.1f s); best greedy eval "
                "blocking %.4f at iteration %d\npolicy: %s/policy.bin  curve: %s/curve.csv\n",
                hsdag_pacml_dqn_iteration(t), (long long)s.episodes, (long long)s.steps, s.wall_s, best, bi,
                o.out, o.out);
        }
        rc = cli_write_out("cluster train", "-", &b);
        hsdag_buf_free(&b);
    }
    goto done;
fail:
    rc = cli_fail("cluster train", rc, &e);
done:
    hsdag_pacml_dqn_free(t);
    hsdag_cluster_free(env);
    hsdag_buf_free(&curve);
    hsdag_buf_free(&img);
    return rc;
}
