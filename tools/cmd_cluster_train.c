/* cmd_cluster_train.c - 'hsdag cluster train': trains the PAC-ML GNN policy with PPO for one beta
 *   distribution; writes DIR/curve.csv, DIR/checkpoint.bin (resumable) and DIR/policy.bin (best).
 * Not here: the network and PPO (src/learn/pacml_*.c); evaluation is 'hsdag cluster run --policy
 * learned:DIR'.
 * Entry points: cmd_cluster_train (argv[0] = "train"; wired from cmd_cluster).
 */
#include "cluster_train.h"
#include "hsdag/cluster.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

int cmd_cluster_train(int argc, char **argv);

static const char *ct_help =
    "usage: hsdag cluster train [--algo ppo] --beta A|B|C|D --seed S --out DIR [options]\n"
    "       hsdag cluster train --resume DIR [--iterations N] [--quiet]\n"
    "       hsdag cluster train --algo dqn ... (DQN: hsdag cluster train --algo dqn --help)\n"
    "\n"
    "Trains the PAC-ML policy (the spec's 2-round mean-pool GNN + 256-unit policy/value heads) with PPO on\n"
    "whole 1001-job episodes of the RAMP cluster for one beta distribution. Reward +1/-1 per decision\n"
    "(accepted / blocked at decision). After every iteration the greedy policy is evaluated on the episode\n"
    "seeds 1799.. and the best one so far is written to DIR/policy.bin; DIR/checkpoint.bin holds the whole\n"
    "training state (atomic writes), so an interrupted run continues bit-identically with --resume.\n"
    "Evaluate with: hsdag cluster run --policy learned:DIR --beta X --seed S\n"
    "\n"
    "  --beta X            JCT requirement distribution to train on (default A)\n"
    "  --seed S            seed of the initial weights, sampling, minibatches and training episodes (default "
    "0)\n"
    "  --out DIR           output directory (created); refuses to overwrite an existing DIR/checkpoint.bin\n"
    "  --resume DIR        continue the run in DIR (its options are restored; --iterations may extend it)\n"
    "  --iterations N      PPO iterations in total, at least 1 (default 60); with --resume, at least the\n"
    "                      iterations already done\n"
    "  --episodes N        episodes collected per iteration (default 4, about 4000 decisions)\n"
    "  --epochs N          SGD passes over each iteration's batch (default 8; the tuned RLlib config used "
    "50)\n"
    "  --minibatch N       samples per Adam step (default 128)\n"
    "  --lr X              Adam learning rate (default 2.785e-4, tuned config)\n"
    "  --clip X            PPO ratio clip (default 0.18, tuned config)\n"
    "  --gamma X           discount (default 0.997)\n"
    "  --lambda X          GAE lambda (default 0.95)\n"
    "  --entropy X         entropy bonus weight (default 0.003)\n"
    "  --vf X              value loss weight (default 0.5)\n"
    "  --kl X              initial KL(old||new) weight, adapted towards --kl-target (default 0.01)\n"
    "  --kl-target X       target KL per iteration (default 0.001; 0 keeps --kl fixed)\n"
    "  --grad-clip X       global gradient norm clip (default 1.5)\n"
    "  --hidden N          width of the policy and value hidden layers (default 256)\n"
    "  --mask M            the policy's action mask: spec (the environment's, default), place (also drop\n"
    "                      degrees the first-fit placer cannot place now), place-jct (also drop degrees "
    "whose\n"
    "                      cached JCT misses the job's deadline); stored in the policy file\n"
    "  --eval-episodes N   greedy evaluation episodes per iteration (default 3)\n"
    "  --time-unit-fix     train on the simulator with communication in ms (see 'hsdag cluster --help')\n"
    "  --horizon T         episode horizon (default 1e6; smaller = shorter episodes, e.g. for tests)\n"
    "  --interarrival T    time between arrivals (default 1000)\n"
    "  --quiet             no progress bar (it is shown only on a terminal anyway)\n"
    "  --json              print a JSON summary at the end\n"
    "  --help              this text\n"
    "\n"
    "curve.csv columns: iteration, steps, train_blocking (mean blocking rate of the sampled training "
    "episodes),\n"
    "train_return, eval_blocking (greedy, seeds 1799..), entropy, value_loss (return units^2), policy_loss,\n"
    "kl, kl_coeff, clip_frac, grad_norm, wall_s\n";

typedef struct ct_opts {
    hsdag_cluster_config cc;
    hsdag_pacml_train_config tc;
    const char *out, *resume;
    int quiet, json, help, iters_set;
} ct_opts;

int ct_num(const char *opt, const char *s, double lo, double hi, double *v)
{
    if (cli_parse_double(s, lo, hi, v) < 0)
        return cli_usage_error("cluster train", "%s '%s': not a number in [%g, %g]", opt, s, lo, hi);
    return 0;
}
int ct_int(const char *opt, const char *s, long lo, long hi, long *v)
{
    if (cli_parse_int(s, lo, hi, v) < 0)
        return cli_usage_error("cluster train", "%s '%s': not an integer in [%ld, %ld]", opt, s, lo, hi);
    return 0;
}

static int ct_parse(int argc, char **argv, ct_opts *o)
{
    static const struct option lo[] = {{"algo", 1, 0, 'A'},
                                       {"beta", 1, 0, 'b'},
                                       {"seed", 1, 0, 's'},
                                       {"out", 1, 0, 'o'},
                                       {"resume", 1, 0, 'R'},
                                       {"iterations", 1, 0, 'n'},
                                       {"episodes", 1, 0, 'E'},
                                       {"epochs", 1, 0, 'e'},
                                       {"minibatch", 1, 0, 'm'},
                                       {"lr", 1, 0, 'l'},
                                       {"clip", 1, 0, 'c'},
                                       {"gamma", 1, 0, 'g'},
                                       {"lambda", 1, 0, 'L'},
                                       {"entropy", 1, 0, 'H'},
                                       {"vf", 1, 0, 'v'},
                                       {"kl", 1, 0, 'k'},
                                       {"kl-target", 1, 0, 'K'},
                                       {"grad-clip", 1, 0, 'G'},
                                       {"hidden", 1, 0, 'W'},
                                       {"mask", 1, 0, 'M'},
                                       {"eval-episodes", 1, 0, 'V'},
                                       {"time-unit-fix", 0, 0, 'f'},
                                       {"horizon", 1, 0, 'T'},
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
            if (strcmp(optarg, "ppo"))
                return cli_usage_error("cluster train", "--algo '%s': ppo or dqn", optarg);
            break;
        case 'b':
            if (strlen(optarg) != 1 || optarg[0] < 'A' || optarg[0] > 'D')
                return cli_usage_error("cluster train", "--beta '%s': must be A, B, C or D", optarg);
            o->cc.beta = optarg[0];
            break;
        case 's':
            if ((rc = ct_int("--seed", optarg, 0, 2147483647L, &v))) return rc;
            o->tc.seed = (uint64_t)v;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'R':
            o->resume = optarg;
            break;
        case 'n':
            if ((rc = ct_int("--iterations", optarg, 1, 1000000, &v))) return rc;
            o->tc.iterations = (int32_t)v;
            o->iters_set = 1;
            break;
        case 'E':
            if ((rc = ct_int("--episodes", optarg, 1, 10000, &v))) return rc;
            o->tc.episodes_per_iter = (int32_t)v;
            break;
        case 'e':
            if ((rc = ct_int("--epochs", optarg, 1, 1000, &v))) return rc;
            o->tc.epochs = (int32_t)v;
            break;
        case 'm':
            if ((rc = ct_int("--minibatch", optarg, 1, 1000000, &v))) return rc;
            o->tc.minibatch = (int32_t)v;
            break;
        case 'l':
            if ((rc = ct_num("--lr", optarg, 1e-9, 1, &d))) return rc;
            o->tc.lr = (float)d;
            break;
        case 'c':
            if ((rc = ct_num("--clip", optarg, 1e-3, 10, &d))) return rc;
            o->tc.loss.clip = (float)d;
            break;
        case 'g':
            if ((rc = ct_num("--gamma", optarg, 1e-3, 0.999999, &d))) return rc;
            o->tc.gamma = d;
            break;
        case 'L':
            if ((rc = ct_num("--lambda", optarg, 0, 1, &d))) return rc;
            o->tc.lambda = d;
            break;
        case 'H':
            if ((rc = ct_num("--entropy", optarg, 0, 10, &d))) return rc;
            o->tc.loss.ent_coeff = (float)d;
            break;
        case 'v':
            if ((rc = ct_num("--vf", optarg, 0, 100, &d))) return rc;
            o->tc.loss.vf_coeff = (float)d;
            break;
        case 'k':
            if ((rc = ct_num("--kl", optarg, 0, 100, &d))) return rc;
            o->tc.loss.kl_coeff = (float)d;
            break;
        case 'K':
            if ((rc = ct_num("--kl-target", optarg, 0, 100, &d))) return rc;
            o->tc.kl_target = (float)d;
            break;
        case 'G':
            if ((rc = ct_num("--grad-clip", optarg, 0, 1e6, &d))) return rc;
            o->tc.grad_clip = (float)d;
            break;
        case 'W':
            if ((rc = ct_int("--hidden", optarg, 1, 4096, &v))) return rc;
            o->tc.net.fc_hidden = (int32_t)v;
            break;
        case 'M':
            if (hsdag_pacml_mask_parse(&o->tc.net.mask_mode, optarg, NULL) < 0)
                return cli_usage_error("cluster train", "--mask '%s': spec, place or place-jct", optarg);
            break;
        case 'V':
            if ((rc = ct_int("--eval-episodes", optarg, 0, 1000, &v))) return rc;
            o->tc.eval_episodes = (int32_t)v;
            break;
        case 'f':
            o->cc.time_unit_fix = 1;
            break;
        case 'T':
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
            return cli_usage_error("cluster train", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error("cluster train", "unexpected argument '%s'", argv[optind]);
    if (o->help) return 0;
    if (!o->out && !o->resume)
        return cli_usage_error("cluster train", "--out DIR or --resume DIR is required");
    if (o->out && o->resume)
        return cli_usage_error("cluster train", "give either --out or --resume, not both");
    if (o->cc.horizon / o->cc.interarrival > 1e7)
        return cli_usage_error("cluster train", "horizon / interarrival above 1e7 arrivals");
    return 0;
}

static int ct_join(char *dst, size_t cap, const char *dir, const char *name)
{
    return snprintf(dst, cap, "%s/%s", dir, name) < (int)cap ? 0 : -1;
}

int ct_write(const char *dir, const char *name, const hsdag_buf *b, hsdag_err *e)
{
    char p[4096];
    if (ct_join(p, sizeof p, dir, name) < 0) return hsdag_err_set(e, HSDAG_EINVAL, "%s: path too long", dir);
    if (b->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", p);
    return hsdag_write_file_atomic(p, b->len ? b->data : "", b->len, e);
}

static void ct_curve_row(hsdag_buf *b, const hsdag_pacml_iter_stats *s)
{
    hsdag_buf_printf(b, "%d,%lld,%.6f,%.2f,%.6f,%.6f,%.6g,%.6g,%.6g,%.6g,%.4f,%.5g,%.2f\n", s->iteration,
                     (long long)s->steps, s->train_blocking, s->train_return, s->eval_blocking, s->entropy,
                     s->value_loss, s->policy_loss, s->kl, s->kl_coeff, s->clip_frac, s->grad_norm,
                     s->wall_s);
}

/* --resume continues a run as it was: options given again must agree with the checkpoint's. The options are
 * parsed a second time on top of the restored configuration; any field they change is refused. */
static int ct_same_run(int argc, char **argv, const ct_opts *o, const char *path, hsdag_err *e)
{
    ct_opts chk = *o;
    if (ct_parse(argc, argv, &chk) != 0) return HSDAG_EINVAL;
    chk.tc.iterations = o->tc.iterations;
    const char *f = hsdag_cluster_config_diff(&chk.cc, &o->cc);
    if (!f) f = hsdag_pacml_train_config_diff(&chk.tc, &o->tc);
    if (!f) return 0;
    return hsdag_err_set(e, HSDAG_EINVAL,
                         "%s: the run was made with another --%s; --resume continues it as it was (drop the "
                         "option, or train into a new --out)",
                         path, f);
}

int cmd_cluster_train(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) /* --algo dqn has its own options (cmd_cluster_train_dqn.c) */
        if (!strcmp(argv[i], "--algo") && !strcmp(argv[i + 1], "dqn"))
            return cmd_cluster_train_dqn(argc, argv);
    ct_opts o;
    memset(&o, 0, sizeof o);
    o.cc = hsdag_cluster_config_default();
    o.tc = hsdag_pacml_train_config_default();
    int rc = ct_parse(argc, argv, &o);
    if (rc) return rc;
    if (o.help) {
        fputs(ct_help, stdout);
        return CLI_OK;
    }
    hsdag_err e = {0};
    const char *dir = o.out ? o.out : o.resume;
    char path[4096];
    char *ck = NULL, *curve_old = NULL;
    size_t ck_len = 0, curve_len = 0;
    hsdag_cluster *env = NULL;
    hsdag_pacml_trainer *t = NULL;
    hsdag_buf curve = {0}, img = {0};
    if (ct_join(path, sizeof path, dir, "checkpoint.bin") < 0)
        return cli_usage_error("cluster train", "'%s': path too long", dir);
    if (o.resume) {
        if ((rc = hsdag_read_file(&ck, &ck_len, path, (size_t)256 << 20, &e)) < 0)
            return cli_fail("cluster train", rc, &e);
        if ((rc = hsdag_cluster_train_load(&env, &t, &o.cc, ck, ck_len, o.iters_set ? o.tc.iterations : -1,
                                           path, &e)) < 0)
            goto fail;
        o.tc = *hsdag_pacml_trainer_config(t);
        if ((rc = ct_same_run(argc, argv, &o, path, &e)) < 0) goto fail;
        char cp[4096];
        if (ct_join(cp, sizeof cp, dir, "curve.csv") == 0 &&
            hsdag_read_file(&curve_old, &curve_len, cp, 0, NULL) == 0) {
            /* keep the header and the rows of the iterations the checkpoint covers */
            int32_t done = hsdag_pacml_trainer_iteration(t), lines = 0;
            size_t keep = 0;
            for (size_t i = 0; i < curve_len; i++)
                if (curve_old[i] == '\n' && ++lines == done + 1) {
                    keep = i + 1;
                    break;
                }
            if (lines == done + 1) hsdag_buf_append(&curve, curve_old, keep);
        }
    } else {
        struct stat sb;
        if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
            hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
            return cli_fail("cluster train", HSDAG_EIO, &e);
        }
        if (stat(path, &sb) == 0) {
            hsdag_err_set(&e, HSDAG_EINVAL, "%s exists: use --resume %s or another --out", path, dir);
            return cli_fail("cluster train", HSDAG_EINVAL, &e);
        }
        if ((rc = hsdag_cluster_create(&env, &o.cc, NULL, NULL, 0, &e)) < 0) goto fail;
        hsdag_pacml_env pe;
        hsdag_cluster_pacml_env(&pe, env);
        if ((rc = hsdag_pacml_trainer_create(&t, &pe, &o.tc, &e)) < 0) goto fail;
    }
    if (!curve.len)
        hsdag_buf_printf(&curve,
                         "iteration,steps,train_blocking,train_return,eval_blocking,entropy,value_loss,"
                         "policy_loss,kl,kl_coeff,clip_frac,grad_norm,wall_s\n");
    int32_t total = hsdag_pacml_trainer_total(t);
    if (o.resume && hsdag_pacml_trainer_iteration(t) > total) {
        rc = cli_usage_error("cluster train", "%s has %d iterations already: give --iterations at least that",
                             dir, hsdag_pacml_trainer_iteration(t));
        goto done;
    }
    cli_progress pg;
    cli_progress_start(&pg, "train", total, o.quiet);
    hsdag_pacml_iter_stats s = {0};
    while (hsdag_pacml_trainer_iteration(t) < total) {
        if ((rc = hsdag_pacml_trainer_iterate(t, &s, &e)) < 0) break;
        ct_curve_row(&curve, &s);
        /* checkpoint = the cluster configuration + the trainer state (the library's run format); atomic */
        hsdag_buf ckb = {0};
        rc = hsdag_cluster_train_save(&ckb, &o.cc, t, &e);
        if (rc == 0) rc = ct_write(dir, "checkpoint.bin", &ckb, &e);
        hsdag_buf_free(&ckb);
        img.len = 0;
        if (rc == 0) rc = hsdag_pacml_trainer_save_best(t, &img, &e);
        if (rc == 0) rc = ct_write(dir, "policy.bin", &img, &e);
        if (rc == 0) rc = ct_write(dir, "curve.csv", &curve, &e);
        if (rc < 0) break;
        char extra[96];
        int32_t bi;
        double best = hsdag_pacml_trainer_best(t, &bi);
        snprintf(extra, sizeof extra, "train %.3f eval %.3f best %.3f", s.train_blocking, s.eval_blocking,
                 best);
        cli_progress_update(&pg, hsdag_pacml_trainer_iteration(t), extra);
    }
    cli_progress_end(&pg);
    if (rc < 0) goto fail;
    {
        int32_t bi = 0;
        double best = hsdag_pacml_trainer_best(t, &bi);
        hsdag_buf b = {0};
        if (o.json) {
            hsdag_buf_printf(&b,
                             "{\"beta\": \"%c\", \"seed\": %llu, \"iterations\": %d, \"steps\": %lld, "
                             "\"best_iteration\": %d, "
                             "\"best_eval_blocking\": ",
                             o.cc.beta, (unsigned long long)o.tc.seed, hsdag_pacml_trainer_iteration(t),
                             (long long)s.steps, bi);
            if (isfinite(best))
                hsdag_buf_double(&b, best);
            else
                hsdag_buf_printf(&b, "null");
            hsdag_buf_printf(&b, ", \"wall_s\": ");
            hsdag_buf_double(&b, s.wall_s);
            hsdag_buf_printf(&b, ", \"dir\": ");
            hsdag_buf_json_str(&b, dir);
            hsdag_buf_printf(&b, "}\n");
        } else {
            hsdag_buf_printf(&b,
                             "trained %d iterations (%lld decisions, %.1f s); best greedy eval blocking %.4f "
                             "at iteration %d\n"
                             "policy: %s/policy.bin  curve: %s/curve.csv  checkpoint: %s/checkpoint.bin\n",
                             hsdag_pacml_trainer_iteration(t), (long long)s.steps, s.wall_s, best, bi, dir,
                             dir, dir);
        }
        rc = cli_write_out("cluster train", "-", &b);
        hsdag_buf_free(&b);
    }
    goto done;
fail:
    rc = cli_fail("cluster train", rc, &e);
done:
    hsdag_pacml_trainer_free(t);
    hsdag_cluster_free(env);
    hsdag_buf_free(&curve);
    hsdag_buf_free(&img);
    hsdag_free(ck);
    hsdag_free(curve_old);
    return rc;
}
