/* SPDX-License-Identifier: BSD-3-Clause */
/* registry_help.h - rqdisk --list and --help-filter: what the registries say of what they hold. */
#ifndef RQDISK_REGISTRY_HELP_H
#define RQDISK_REGISTRY_HELP_H

/*
 * rqdisk --list WHAT (elevators, filters or backends): one name a line,
 * with what it is.  0, or 1 with a one-line reason on stderr.
 */
int registry_list(const char *what);
/*
 * rqdisk --help-filter NAME and --help-backend NAME: the layer's keys,
 * one a line, "  KEY  HELP" (a key of a word, the model filter's models,
 * as WORD:KEY).  0, or 1 with a one-line reason on stderr.
 */
int registry_help_filter(const char *name);
int registry_help_backend(const char *name);

#endif
