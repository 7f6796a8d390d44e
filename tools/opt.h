/* opt.h - the one option table of the hsdag CLI: every command's options, their names, meanings, ranges
 * and defaults, one parser, one help renderer and the README's CLI reference, all from the same rows.
 * Not here: what a command does with its options (tools/cmd_*.c) or any library logic.
 * Entry points: cli_args_init, cli_parse, cli_given, cli_run_dir, cli_help, cli_reference,
 *   cli_range_error, cli_commands. To add an option: one row in tools/opt.c (and a field in cli_args).
 */
#ifndef HSDAG_TOOLS_OPT_H
#define HSDAG_TOOLS_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Every command, the gen and cluster subcommands each on their own. */
typedef enum cli_cmd {
    CMD_INFO = 0,
    CMD_CONVERT,
    CMD_SIMULATE,
    CMD_PLACE,
    CMD_BOUND,
    CMD_COMPARE,
    CMD_TRAIN,
    CMD_PRETRAIN, /* train --graphs LIST: one policy for many graphs */
    CMD_PROFILE,
    CMD_CALIBRATE,
    CMD_GEN_TRANSFORMER,
    CMD_GEN_RANDOM,
    CMD_CLUSTER_RUN,
    CMD_CLUSTER_COMPARE,
    CMD_CLUSTER_INFO,
    CMD_CLUSTER_TRAIN,
    CMD_COUNT_
} cli_cmd;

/* One command as --help and the README show it. */
typedef struct cli_command_info {
    const char *name;    /* "place", "cluster run" */
    const char *args;    /* positional arguments, "MODEL", "IN OUT", "" */
    int n_args;          /* how many */
    int out_arg;         /* index of a positional argument that is an output file, -1 if none */
    const char *summary; /* one line */
    const char *about;   /* a paragraph for --help */
} cli_command_info;
const cli_command_info *cli_commands(int *n);

#define CLI_LIST_MAX 256 /* a repeatable option keeps at most this many values */
#define CLI_MAX_POS 256  /* positional arguments of a command taking one or more */
typedef struct cli_list {
    const char *v[CLI_LIST_MAX];
    int n;
} cli_list;

#define CLI_MAX_OPTS 192

/* The values of every option of every command; a command reads the ones it takes. Defaults are set by
 * cli_args_init (the common ones) and then by the command from the library's config defaults, before
 * cli_parse: --help prints what is in the fields then, so it shows the real defaults. */
typedef struct cli_args {
    cli_cmd cmd;
    const char *name; /* "place", "cluster run" (for messages) */
    const char *pos[CLI_MAX_POS];
    int n_pos;
    unsigned char given[CLI_MAX_OPTS]; /* by row of the table */
    /* common */
    int help, json, quiet, force;
    long seed;
    const char *devices, *semantics, *costs, *profile;
    cli_list mem;      /* --mem DEV=SIZE|P%, in order */
    cli_list mem_also; /* train --graphs: --mem-also DEV=SIZE,SIZE,..., in order */
    long budget;       /* measurements of black-box and learned methods */
    double noise;      /* their log-normal measurement noise */
    /* outputs */
    const char *out, *out_dir, *affinity, *split, *dot, *dot_full, *trace, *save_dir, *markdown, *resume;
    long repeat;
    /* info, convert */
    const char *format, *to;
    int mirror;
    long top;
    /* place, compare */
    const char *method, *methods, *init, *suite;
    int list;
    double time_limit;
    int cpu_time;
    long max_evals, ilp_iterations;
    /* simulate, bound */
    const char *placement, *priority;
    int no_exact, contiguous;
    const char *objective; /* simulate, place, bound, compare */
    /* train */
    long episodes, steps, samples, levels, min_clusters, measure_retries, polish_evals, imitate_steps,
        sil_elite;
    long min_groups, max_groups;
    long rounds, units; /* train --graphs */
    double lr, entropy, entropy_end, dropout, group_mem, penalty, measure_timeout, sil, offset_lr;
    double weight_units;
    const char *gnn, *measure_cmd, *baseline, *update, *reward, *normalize, *warm_start;
    int paper, polish, no_shape, no_id, no_struct, no_coarsen, cost_features, no_cost_features;
    int fixed_clusters, dynamic_clusters, inherit, no_inherit, state_update, no_state_update, no_memory_mask,
        no_measure_memo;
    /* profile, calibrate */
    const char *csv, *device_set, *kernels, *opt_level, *clock, *weights, *device, *set_name, *base;
    long runs, warmup, threads;
    int check_shapes;
    double cache_bytes;
    cli_list models;
    /* gen transformer, gen random-dag (--seed and --name are the common ones) */
    long layers, d_model, heads, kv_heads, ffn, seq, vocab, sequences, target_ops, nodes, window;
    double degree;
    int decode, tied, no_bias;
    const char *dtype;
    /* cluster */
    const char *policy, *beta, *seeds, *policies, *betas, *graphs, *shape, *mask;
    int time_unit_fix;
    double bandwidth, interarrival, horizon;
    long replication;
    /* cluster train */
    long iterations, batch_episodes, epochs, minibatch, hidden, eval_episodes;
    double clip, gamma, lambda, vf, kl, kl_target, grad_clip;
    const char *algo; /* ppo or dqn */
    /* cluster train --algo dqn */
    long n_step, batch, train_every, replay, learning_starts, target_every, eps_decay;
    double lr_end, per_alpha, per_beta, eps_start, eps_end;
    const char *head;
} cli_args;

/* Zeroes a and sets the defaults every command shares (seed 0). */
void cli_args_init(cli_args *a, cli_cmd cmd);

/* cli_parse returns this when the command should go on; otherwise an exit status (help printed: 0; a usage
 * error printed: 2). */
#define CLI_CONTINUE (-1)
/* Parses argv[1..] (argv[0] = the command's last word). Checks every option against the table (unknown, not
 * for this command, renamed, missing value, out of range, not one of the choices), the positional
 * arguments, and every output path (hsdag_out_check / hsdag_out_dir_check, no two outputs naming one file,
 * no output naming an input) before any work starts. */
int cli_parse(cli_args *a, int argc, char **argv);

/* The run directory of train and cluster train: --resume DIR continues in DIR from its checkpoint.bin
 * (*resume = 1); a DIR without one that holds only what a run writes before its first checkpoint (a run
 * killed before or during that write) starts over from the beginning with a notice (*resume = 0); anything
 * else without a checkpoint is refused. Otherwise --out-dir DIR, refused when not empty unless --force
 * (stale temp files of ours do not count). Messages say what to do instead. CLI_OK with *dir set, or 2.
 * resume may be NULL for commands without --resume. */
int cli_run_dir(const cli_args *a, const char **dir, int *resume);

/* 1 if the option stored at offsetof(cli_args, field) was on the command line. */
int cli_given_off(const cli_args *a, size_t off);
#define cli_given(a, field) cli_given_off((a), offsetof(cli_args, field))

/* Prints the command's help: usage, about, every option it takes with its default, the registries' lists
 * (presets, methods, ...) under the options that take their names. */
void cli_help(FILE *f, const cli_args *defaults);
/* The usage of a command made of subcommands ("cluster", "gen"): its subcommands with their summaries. */
void cli_group_usage(FILE *f, const char *group);
/* Prints one line per option: name, metavar ("-" for a flag), kind (flag, int, number, string, choice, in,
 * out, dir), low and high bound, choices ("-" if none) and the commands that take it, tab-separated. */
void cli_table_tsv(FILE *f);
/* Prints the markdown CLI reference of every command (README.md, between its cli-reference markers). */
void cli_reference(FILE *f);

/* The index of a choice option's value in its list (-1 if not one): the library enum of train's --baseline,
 * --update, --reward and --normalize (the lists are in the enums' order). */
int cli_learn_baseline(const char *v);
int cli_learn_update(const char *v);
int cli_learn_reward(const char *v);
int cli_learn_normalize(const char *v);
/* The HSDAG learner's feature kinds (hsdag_learn_config.features) from base and the feature options of train
 * and train --graphs: --no-shape, --no-id, --no-struct switch kinds off, --cost-features adds the cost kind,
 * --no-cost-features (train --graphs, where it is the default) drops it. */
unsigned cli_learn_features(const cli_args *a, unsigned base);

/* Checks v against the choices of the table's option --opt (a value read from a file, not the command line):
 * CLI_OK, or the one wording "hsdag CMD: WHERE: --OPT 'V' is not a, b or c" and 2. */
int cli_check_choice(const char *cmd, const char *where, const char *opt, const char *v);

/* The one wording of a range error: "hsdag CMD: --OPT 'VALUE' is not an integer in [LO, HI]" (or "a
 * number"); returns 2. */
int cli_range_error(const char *cmd, const char *opt, const char *value, int integer, double lo, double hi);

#endif
