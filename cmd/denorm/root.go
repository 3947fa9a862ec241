package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/store"
)

// Exit codes, as DESIGN.md fixes them.
const (
	exitOK       = 0
	exitProblems = 1 // the command ran and found problems, or failed while running
	exitUsage    = 2 // usage or input error
)

// storeEnv names the environment variable that replaces the default --store.
const storeEnv = "DENORM_STORE"

// run is the whole command line, callable in-process by tests: it never
// exits and writes only to the writers it is given.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetIn(os.Stdin)

	ran := false
	markRunning(root, &ran)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err, ran)
	var ee *exitError
	if errors.As(err, &ee) && ee.err == nil {
		return code // the command has already said what it had to say
	}
	name := "denorm"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		fmt.Fprintf(stderr, "%s: interrupted: %v\n", name, err)
		return code
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	if code == exitUsage && !ran {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", name)
	}
	return code
}

func newRootCmd() *cobra.Command {
	defaultStore := store.DefaultURL
	if v := os.Getenv(storeEnv); v != "" {
		defaultStore = v
	}
	root := &cobra.Command{
		Use:   "denorm",
		Short: "Keep denormalized copies correct on HBase-model stores",
		Long: `denorm keeps denormalized copies of data (secondary indexes, copied fields,
counters) correct on stores with HBase's data model, and reviews HBase schemas
for anti-patterns.

It works on an embedded store (Pebble, in a local folder; the default) or on a
real HBase cluster through its Thrift2 gateway. Choose with --store or the
DENORM_STORE environment variable:

  pebble://./denorm-data        embedded store in ./denorm-data (the default)
  pebble:///var/lib/denorm      embedded store at an absolute path
  hbase://127.0.0.1:9090        HBase through its Thrift2 server

The embedded store serves one process at a time (serve and apply cannot
share it); processes that must share a store need HBase.

Exit codes: 0 success; 1 the command ran and found problems (or failed while
running); 2 usage or input error.`,
		Example: `  denorm table create orders --family d:versions=1,compression=SNAPPY --family i
  denorm put orders c42 d:s open --ts 3
  denorm get orders c42
  denorm scan orders --prefix c4 --limit 10
  denorm --store hbase://127.0.0.1:9090 table list`,
		Args:          usageArgs(cobra.NoArgs),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE:          helpAndFail,
	}
	root.PersistentFlags().String("store", defaultStore,
		"store URL: pebble://DIR or hbase://HOST:PORT (env "+storeEnv+")")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })

	root.AddCommand(
		newVersionCmd(),
		newTableCmd(),
		newGetCmd(),
		newScanCmd(),
		newPutCmd(),
		newDeleteCmd(),
		newReviewCmd(),
		newCostCmd(),
		newDdlCmd(),
		newHotspotCmd(),
		newApplyCmd(),
		newGenCmd(),
		newDoctorCmd(),
		newReconcileCmd(),
		newQueryCmd(),
		newServeCmd(),
		newSinkCmd(),
	)
	return root
}

// helpAndFail is the RunE of commands that only group others: called bare,
// they show their help on stderr and exit with a usage error.
func helpAndFail(cmd *cobra.Command, _ []string) error {
	cmd.SetOut(cmd.ErrOrStderr())
	_ = cmd.Help()
	return &exitError{code: exitUsage}
}

// markRunning wraps every RunE in the tree so that run can tell an error
// cobra raised while parsing (always a usage error) from one a command
// returned while working.
func markRunning(c *cobra.Command, ran *bool) {
	if f := c.RunE; f != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			*ran = true
			return f(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		markRunning(sub, ran)
	}
}

// exitError carries an exit code through cobra. A nil err means the command
// has already reported everything and only the code remains.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks err as a usage or input error (exit 2).
func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

// usageErrorf formats a usage or input error (exit 2).
func usageErrorf(format string, a ...any) error { return usageError(fmt.Errorf(format, a...)) }

// problemsFound is what a command returns when it ran to the end and found
// problems it has already printed (exit 1).
func problemsFound() error { return &exitError{code: exitProblems} }

// usageArgs makes cobra's argument checks usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError(err)
		}
		return nil
	}
}

func exitCode(err error, ran bool) int {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case !ran:
		// cobra's own errors: unknown command or flag, wrong arguments.
		return exitUsage
	case errors.Is(err, store.ErrTableNotFound), errors.Is(err, store.ErrTableExists),
		errors.Is(err, store.ErrFamilyNotFound), errors.Is(err, store.ErrCellTooBig),
		errors.Is(err, store.ErrBadURL), errors.Is(err, store.ErrBadTableName):
		// The input named something that is not there, or asked for the
		// impossible.
		return exitUsage
	}
	return exitProblems
}

// openStore opens the store the --store flag names. The caller closes it.
func openStore(cmd *cobra.Command) (store.Store, error) {
	return openStoreURL(cmd, nil)
}

// scanCacheSize is the embedded store's block cache for commands that scan
// whole tables (reconcile): every block is read once, so a cache buys
// nothing (measured: 19.6 s against 22.5 s for a dry run over 494,000
// orders) and costs about twice its size in memory; Pebble's own default.
const scanCacheSize = 8 << 20

// openScanStore is openStore for a command that scans whole tables: an
// embedded store is opened with a small block cache unless the URL sets
// cache_size, as HBase's own scan jobs turn block caching off.
func openScanStore(cmd *cobra.Command) (store.Store, error) {
	return openStoreURL(cmd, func(u *url.URL) {
		if q := u.Query(); u.Scheme == "pebble" && !q.Has("cache_size") {
			q.Set("cache_size", strconv.Itoa(scanCacheSize))
			u.RawQuery = q.Encode()
		}
	})
}

// openStoreURL opens the --store URL, changed first by adjust when set.
func openStoreURL(cmd *cobra.Command, adjust func(*url.URL)) (store.Store, error) {
	raw := store.DefaultURL
	if f := cmd.Flag("store"); f != nil {
		// An empty --store is a mistake (an unset variable in a script),
		// not a wish for the default directory.
		if f.Changed && strings.TrimSpace(f.Value.String()) == "" {
			return nil, usageErrorf("--store is empty: give pebble://DIR or hbase://HOST:PORT, or leave it out for %s", store.DefaultURL)
		}
		if f.Value.String() != "" {
			raw = f.Value.String()
		}
	}
	// A URL no backend can take is the user's mistake (exit 2), unlike a
	// store that fails to open (exit 1); store.Open does not tell them apart.
	u, err := url.Parse(raw)
	if err != nil {
		return nil, usageErrorf("bad --store URL %q: %v", raw, err)
	}
	if !slices.Contains(store.Schemes(), u.Scheme) {
		return nil, usageErrorf("bad --store URL %q: scheme %q is not one of %s",
			raw, u.Scheme, strings.Join(store.Schemes(), ", "))
	}
	if adjust != nil {
		adjust(u)
		raw = u.String()
	}
	return store.Open(cmd.Context(), raw)
}

// closeStore closes st and keeps the first error.
func closeStore(st store.Store, err *error) {
	if cerr := st.Close(); cerr != nil && *err == nil {
		*err = fmt.Errorf("close store: %w", cerr)
	}
}
