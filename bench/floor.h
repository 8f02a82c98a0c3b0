/*
 * floor.h: what the floor clients (bench/floor.c on epoll, bench/floor-uring.c on
 * io_uring) share: their flags, the batch of identical requests they write, the length
 * of the replies they count, connecting, and the line they print. Header-only, so that
 * each floor stays one `cc` command in bench/closed.
 */
#ifndef FLOOR_H
#define FLOOR_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The program's name in its messages. */
static const char *floor_name = "floor";

static void die(const char *what) {
    fprintf(stderr, "%s: %s%s%s\n", floor_name, what, errno ? ": " : "", errno ? strerror(errno) : "");
    exit(1);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* A run as the flags ask for it, with its requests built. */
struct floor_run {
    int port, conns, pipeline, size, set;
    long total;
    char *batch;      /* `pipeline` copies of the one request */
    size_t req_len;   /* one request's bytes */
    long reply_len;   /* one reply's bytes (every reply of a run has the same length) */
    char first;       /* a reply's first byte: '+' for SET, '$' for GET */
};

/* Parses -p PORT -c C -n N -P P -d SIZE -t get|set and builds the batch. */
static struct floor_run floor_setup(int argc, char **argv, const char *name) {
    struct floor_run r = {.conns = 50, .pipeline = 1, .size = 3, .total = 100000};
    int opt;
    floor_name = name;
    while ((opt = getopt(argc, argv, "p:c:n:P:d:t:")) != -1) {
        switch (opt) {
        case 'p': r.port = atoi(optarg); break;
        case 'c': r.conns = atoi(optarg); break;
        case 'n': r.total = atol(optarg); break;
        case 'P': r.pipeline = atoi(optarg); break;
        case 'd': r.size = atoi(optarg); break;
        case 't':
            if (strcmp(optarg, "get") && strcmp(optarg, "set")) die("-t: get or set");
            r.set = !strcmp(optarg, "set");
            break;
        default:
            errno = 0;
            fprintf(stderr, "usage: %s -p PORT -c C -n N -P P -d SIZE -t get|set\n", name);
            exit(1);
        }
    }
    if (r.port <= 0 || r.conns <= 0 || r.total <= 0 || r.pipeline <= 0 || r.size < 0) die("bad arguments");

    static const char get[] = "*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n";
    static const char set_head[] = "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$%d\r\n";
    char digits[16];
    snprintf(digits, sizeof digits, "%d", r.size);
    r.req_len = r.set ? (size_t)snprintf(NULL, 0, set_head, r.size) + r.size + 2 : strlen(get);
    r.batch = malloc(r.req_len * r.pipeline + 64);
    if (!r.batch) die("out of memory");
    for (int i = 0; i < r.pipeline; i++) {
        char *q = r.batch + r.req_len * i;
        if (r.set) {
            int h = sprintf(q, set_head, r.size);
            memset(q + h, 'x', r.size);
            memcpy(q + h + r.size, "\r\n", 2);
        } else {
            memcpy(q, get, r.req_len);
        }
    }
    r.reply_len = r.set ? 5 : (long)(1 + strlen(digits) + 2 + r.size + 2);
    r.first = r.set ? '+' : '$';
    return r;
}

/* A blocking TCP connection to 127.0.0.1:port with TCP_NODELAY. */
static int floor_connect(const struct floor_run *r) {
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(r->port)};
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr)) die("connect");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Checks a batch's first reply bytes; an error reply or anything else ends the run. */
static void floor_check_first(const struct floor_run *r, const char *buf, long len) {
    if (buf[0] == r->first) return;
    fprintf(stderr, "%s: unexpected reply: %.*s\n", floor_name, (int)(len < 80 ? len : 80), buf);
    exit(1);
}

/* Prints the rate like redis-benchmark -q. */
static void floor_report(const struct floor_run *r, double secs) {
    printf("%s: %.2f requests per second\n", r->set ? "SET" : "GET", r->total / secs);
}

#endif
