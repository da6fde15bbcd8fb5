/*
 * test_distcc_hosts -- the distcc host-list grammar (plugins/cc/hosts.c):
 * slot counts with distcc's defaults, every form distcc(1) accepts, and
 * every refusal with a message naming the specification.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../plugins/cc/hosts.h"
#include "cu.h"

static cc_hosts h;
static char why[1024];

static int parse(const char *text)
{
    why[0] = '\0';
    return cc__hosts_parse(text, &h, why, sizeof why);
}

static void slots_default_to_four_per_host_and_two_for_localhost(void)
{
    CU_ASSERT_EQUAL(parse("red green blue"), 0);
    CU_ASSERT_EQUAL(h.slots, 12);
    CU_ASSERT_EQUAL(h.n_hosts, 3);
    CU_ASSERT_EQUAL(parse("localhost"), 0);
    CU_ASSERT_EQUAL(h.slots, 2);
    CU_ASSERT_EQUAL(h.n_local, 1);
    CU_ASSERT_EQUAL(parse("localhost red"), 0);
    CU_ASSERT_EQUAL(h.slots, 6);
}

static void limits_ports_and_options_are_read(void)
{
    CU_ASSERT_EQUAL(parse("localhost/3 10.0.0.1:4000/16,lzo red/5:3633"), 0);
    CU_ASSERT_EQUAL(h.slots, 24);
    CU_ASSERT_EQUAL(h.n_hosts, 3);
    CU_ASSERT_EQUAL(h.n_local, 1);
    CU_ASSERT_EQUAL(parse("127.0.0.1:3632/8"), 0);
    CU_ASSERT_EQUAL(h.slots, 8);
    CU_ASSERT_EQUAL(h.n_local, 0);
    CU_ASSERT_EQUAL(parse("localhost:3632"), 0); /* a daemon, not local */
    CU_ASSERT_EQUAL(h.n_local, 0);
    CU_ASSERT_EQUAL(h.slots, 4);
    CU_ASSERT_EQUAL(parse("[::1]:3632/6,lzo,auth=svc [fe80::1]"), 0);
    CU_ASSERT_EQUAL(h.slots, 10);
    CU_ASSERT_EQUAL(h.pump, 0);
}

static void ssh_hosts_take_a_user_limit_and_command(void)
{
    CU_ASSERT_EQUAL(parse("@bigman/16:/opt/bin/distccd me@small"), 0);
    CU_ASSERT_EQUAL(h.slots, 20);
    CU_ASSERT_EQUAL(h.n_hosts, 2);
}

static void global_options_and_comments(void)
{
    CU_ASSERT_EQUAL(parse("--randomize localhost/2 --localslots=3 "
                          "--localslots_cpp=5\n# cartman is down\n"
                          "distant/3,lzo # trailing\n"),
                    0);
    CU_ASSERT_EQUAL(h.randomize, 1);
    CU_ASSERT_EQUAL(h.localslots, 3);
    CU_ASSERT_EQUAL(h.localslots_cpp, 5);
    CU_ASSERT_EQUAL(h.slots, 5);
    CU_ASSERT_EQUAL(parse("red"), 0);
    CU_ASSERT_EQUAL(h.localslots_cpp, -1);
    CU_ASSERT_EQUAL(h.randomize, 0);
}

static void pump_and_zeroconf_are_reported(void)
{
    CU_ASSERT_EQUAL(parse("red,cpp,lzo"), 0);
    CU_ASSERT_EQUAL(h.pump, 1);
    CU_ASSERT_EQUAL(parse("+zeroconf"), 0);
    CU_ASSERT_EQUAL(h.zeroconf, 1);
    CU_ASSERT_EQUAL(h.n_hosts, 0);
}

/* parse(text) fails and the message contains `part`. */
static void refused(const char *text, const char *part)
{
    CU_ASSERT_EQUAL(parse(text), -1);
    if (strstr(why, part) == NULL) {
        fprintf(stderr, "for '%s': message '%s' lacks '%s'\n", text, why,
                part);
        CU_FAIL("message");
    }
}

static void malformed_specifications_are_refused_by_name(void)
{
    refused("", "names no host");
    refused("  # only a comment\n", "names no host");
    refused("red/0", "'red/0': the job limit");
    refused("red/x", "'red/x': the job limit");
    refused("red/", "'red/': the job limit");
    refused("red:0", "'red:0': the port");
    refused("red:70000", "the port");
    refused("red:12ab", "the port");
    refused("red,zip", "unknown option 'zip'");
    refused("red,", "empty option");
    refused("/4", "no host name");
    refused("[::1", "without ']'");
    refused("[]:3632", "no host name");
    refused("red/2/3", "'red/2/3': the job limit");
    refused("red:1:2", "'red:1:2': the port");
    refused("red/2/3:1", "the job limit");
    refused("red/2:1/3", "unexpected '/'");
    refused("--localslots=0", "needs a number");
    refused("--localslots_cpp=", "unknown option");
    refused("--fast", "unknown option");
    refused("good bad/-1", "'bad/-1'");
}

static void flatten_drops_comments_and_joins_with_one_space(void)
{
    char *s = cc__hosts_flatten("# head\n  a/2\tb # c d\n\ne,lzo");
    CU_ASSERT_STRING_EQUAL(s, "a/2 b e,lzo");
    free(s);
    s = cc__hosts_flatten("");
    CU_ASSERT_STRING_EQUAL(s, "");
    free(s);
}

static void the_key_wins_then_the_environment_then_files(void)
{
    char dir[] = "/tmp/vsched-hosts.XXXXXX";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    char path[256], ddir[300], home[300];
    snprintf(path, sizeof path, "%s/hosts", dir);
    snprintf(ddir, sizeof ddir, "DISTCC_DIR=%s", dir);
    snprintf(home, sizeof home, "HOME=%s", dir);
    cc_hosts_src src;
    char *env_hosts[] = {"DISTCC_HOSTS=envhost/3", ddir, NULL};
    CU_ASSERT_EQUAL(
        cc__hosts_find("keyhost", env_hosts, &src, why, sizeof why), 1);
    CU_ASSERT_STRING_EQUAL(src.text, "keyhost");
    CU_ASSERT_STRING_EQUAL(src.origin, "distcc_hosts");
    free(src.text);
    CU_ASSERT_EQUAL(cc__hosts_find("", env_hosts, &src, why, sizeof why), 1);
    CU_ASSERT_STRING_EQUAL(src.text, "envhost/3");
    CU_ASSERT_STRING_EQUAL(src.origin, "DISTCC_HOSTS");
    free(src.text);
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs("# file\nfilehost/7\n", f);
    fclose(f);
    char *env_dir[] = {ddir, NULL};
    CU_ASSERT_EQUAL(cc__hosts_find(NULL, env_dir, &src, why, sizeof why), 1);
    CU_ASSERT_STRING_EQUAL(src.origin, path);
    CU_ASSERT_EQUAL(parse(src.text), 0);
    CU_ASSERT_EQUAL(h.slots, 7);
    free(src.text);
    unlink(path);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/.distcc", dir);
    CU_ASSERT_EQUAL(mkdir(sub, 0700), 0);
    snprintf(path, sizeof path, "%s/.distcc/hosts", dir);
    f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs("homehost/2\n", f);
    fclose(f);
    char *env_home[] = {home, NULL};
    CU_ASSERT_EQUAL(cc__hosts_find(NULL, env_home, &src, why, sizeof why), 1);
    CU_ASSERT_STRING_EQUAL(src.text, "homehost/2\n");
    free(src.text);
    unlink(path);
    rmdir(sub);
    rmdir(dir);
}

static const vr_cu_test tests[] = {
    {"slots_default_to_four_per_host_and_two_for_localhost",
     slots_default_to_four_per_host_and_two_for_localhost},
    {"limits_ports_and_options_are_read", limits_ports_and_options_are_read},
    {"ssh_hosts_take_a_user_limit_and_command",
     ssh_hosts_take_a_user_limit_and_command},
    {"global_options_and_comments", global_options_and_comments},
    {"pump_and_zeroconf_are_reported", pump_and_zeroconf_are_reported},
    {"malformed_specifications_are_refused_by_name",
     malformed_specifications_are_refused_by_name},
    {"flatten_drops_comments_and_joins_with_one_space",
     flatten_drops_comments_and_joins_with_one_space},
    {"the_key_wins_then_the_environment_then_files",
     the_key_wins_then_the_environment_then_files},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("distcc_hosts", tests);
}
