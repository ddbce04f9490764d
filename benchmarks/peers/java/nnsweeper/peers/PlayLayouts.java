package nnsweeper.peers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import minesweeper.gamestate.GameStateModel;
import minesweeper.settings.GameSettings;
import minesweeper.solver.bulk.BulkController;
import minesweeper.solver.bulk.BulkRequest;
import minesweeper.solver.bulk.BulkRequestGame;
import minesweeper.solver.bulk.GamePostListener;
import minesweeper.solver.settings.PlayStyle;
import minesweeper.solver.settings.SolverSettings;
import minesweeper.structure.Location;

/**
 * Plays given layouts with the peer's bulk machinery and settings, chunk after chunk, in one JVM.
 *
 * <p>Usage: {@code PlayLayouts WARMUP}. It first plays WARMUP of the peer's own expert games,
 * untimed and unrecorded, so that the timed games do not pay for the JIT compiler's start (a few
 * hundred games: the first hundreds of a JVM take two to four times as long), prints
 * {@code nnsweeper-peers ready}, then reads commands from its standard input, one a line, fields
 * separated by tabs:</p>
 * <pre>
 * play LAYOUTS RESULTS SHOW     plays the games of LAYOUTS, writes RESULTS, prints "nnsweeper-peers done"
 * </pre>
 * <p>and ends at the end of its input. LAYOUTS is a text file:</p>
 * <pre>
 * nnsweeper-layouts 1
 * board WIDTH HEIGHT MINES
 * start X Y
 * games N
 * INDEX SEED TILE TILE ...     (N lines, MINES tiles each, tile = y * WIDTH + x)
 * </pre>
 * <p>Every layout is checked (and its game made) before any game is played. The games are
 * then played in order by the peer's own {@code BulkController} and {@code BulkWorker}: one
 * worker, the settings of {@link PeerSettings}, its play loop, its count of guesses, and a
 * game counted won when its state is WON. RESULTS receives:</p>
 * <pre>
 * nnsweeper-peer-results 1
 * games N
 * INDEX STATE GUESSES REVEALED NANOS CRC [BOARD] [MOVES]     (N lines, in order)
 * </pre>
 * <p>STATE is the peer's final game state (3 won, 2 lost, 1 unfinished: the peer's worker
 * gave up on it, which it counts as a loss), REVEALED the safe cells revealed, NANOS the
 * time from the end of the previous game to the end of this one (its game state handed out,
 * its play; one worker, so nothing else runs between), CRC {@link LayoutGameState#boardCrc()},
 * BOARD, when SHOW has bit 1 set, {@link LayoutGameState#cells()}: the whole board played, and
 * MOVES, when SHOW has bit 2 set, {@link LayoutGameState#moves()}: every action of the game.
 * Any exception ends the program with status 3 (a worker of the peer's that dies would
 * otherwise leave its controller waiting for ever).</p>
 */
public final class PlayLayouts {

    private PlayLayouts() {
    }

    /** The peer's controller serving the given games in order, whatever seed it draws. */
    static final class LayoutPlayer extends BulkController {
        private final List<LayoutGameState> games;
        private int next = 0;

        LayoutPlayer(List<LayoutGameState> games, SolverSettings settings) {
            super(new Random(0), games.size(), settings, 1);
            this.games = games;
        }

        @Override
        protected GameStateModel getGameState(long seed) {
            return games.get(next++);
        }
    }

    /** Records each game as the controller hands it back, in order. */
    static final class Recorder extends GamePostListener {
        private final StringBuilder lines = new StringBuilder();
        private final int show;
        private long last;
        private int recorded = 0;

        Recorder(int show) {
            this.show = show;
        }

        synchronized void begin() {
            last = System.nanoTime();
        }

        @Override
        public synchronized void postAction(BulkRequest request) {
            long now = System.nanoTime();
            BulkRequestGame game = request.getRequestGames()[0];
            LayoutGameState gs = (LayoutGameState) game.getGame();
            int revealed = gs.getWidth() * gs.getHeight() - gs.getHidden();
            lines.append(gs.getIndex()).append(' ').append(gs.getGameState()).append(' ')
                    .append(game.getGuesses()).append(' ').append(revealed).append(' ')
                    .append(now - last).append(' ').append(gs.boardCrc());
            if ((show & 1) != 0) {
                lines.append(' ').append(gs.cells());
            }
            if ((show & 2) != 0) {
                lines.append(' ').append(gs.moves());
            }
            lines.append('\n');
            last = now;
            recorded++;
            notifyAll();
        }

        @Override
        public void postResults() {
        }

        /**
         * The lines of all {@code games}, once the last is recorded. The controller wakes the thread
         * that runs it with an interrupt as the run ends, which may land here: it is no cancellation,
         * so the wait goes on, and the thread's interrupt flag is cleared before the next run.
         */
        synchronized String waitFor(int games) {
            while (recorded < games) {
                try {
                    wait(1000);
                } catch (InterruptedException e) {
                    // the controller's wake-up call (see above)
                }
            }
            Thread.interrupted();
            return lines.toString();
        }
    }

    public static void main(String[] args) throws Exception {
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
            System.err.println("nnsweeper.peers.PlayLayouts: " + thread.getName() + " failed: " + e);
            e.printStackTrace();
            Runtime.getRuntime().halt(3);
        });
        try {
            serve(args);
        } catch (Exception e) {
            System.err.println("nnsweeper.peers.PlayLayouts: " + e.getMessage());
            Runtime.getRuntime().halt(3);
        }
        System.exit(0);
    }

    private static void serve(String[] args) throws IOException {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: PlayLayouts WARMUP (then commands on standard input)");
        }
        int warmup = Integer.parseInt(args[0]);
        if (warmup > 0) {
            PeerSettings.ownGames(warmup, 1L, GameSettings.EXPERT, 1, null);
        }
        System.out.println("nnsweeper-peers ready");
        System.out.flush();
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = commands.readLine()) != null) {
            String[] f = line.split("\t");
            if (f.length != 4 || !f[0].equals("play")) {
                throw new IllegalArgumentException("a command must be play LAYOUTS RESULTS SHOW (tabs between); got '"
                        + line + "'");
            }
            play(f[1], f[2], Integer.parseInt(f[3]));
            System.out.println("nnsweeper-peers done");
            System.out.flush();
        }
    }

    /**
     * Plays the games of the layout file {@code layouts} and writes their results to {@code results},
     * with each board (bit 1 of {@code show}) and each game's actions (bit 2).
     */
    static void play(String layouts, String results, int show) throws IOException {
        List<LayoutGameState> games = read(layouts);
        Recorder recorder = new Recorder(show);
        LayoutPlayer player = new LayoutPlayer(games, PeerSettings.solverSettings());
        player.setPlayStyle(PlayStyle.NO_FLAG);
        player.setReportInterval(0);
        player.registerPostGameListener(recorder);
        recorder.begin();
        player.run();
        String lines = recorder.waitFor(games.size());
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(results),
                StandardCharsets.UTF_8))) {
            out.print("nnsweeper-peer-results 1\ngames " + games.size() + "\n" + lines);
        }
    }

    /** The games of a layout file, each checked. */
    static List<LayoutGameState> read(String path) throws IOException {
        try (BufferedReader in = Files.newBufferedReader(Paths.get(path), StandardCharsets.UTF_8)) {
            String version = expect(in, path, "nnsweeper-layouts", 1)[0];
            if (!version.equals("1")) {
                throw new IllegalArgumentException(path + ": layout files of version 1 are read; got " + version);
            }
            String[] board = expect(in, path, "board", 3);
            String[] start = expect(in, path, "start", 2);
            int n = Integer.parseInt(expect(in, path, "games", 1)[0]);
            int width = Integer.parseInt(board[0]);
            int height = Integer.parseInt(board[1]);
            int mines = Integer.parseInt(board[2]);
            GameSettings settings = GameSettings.create(width, height, mines);
            Location first = new Location(Integer.parseInt(start[0]), Integer.parseInt(start[1]));
            List<LayoutGameState> games = new ArrayList<>(n);
            for (int k = 0; k < n; k++) {
                String line = in.readLine();
                if (line == null) {
                    throw new IllegalArgumentException(path + " ends after " + k + " of its " + n + " games");
                }
                String[] f = line.trim().split(" ");
                if (f.length != 2 + mines) {
                    throw new IllegalArgumentException(path + ": game line " + k + " must hold an index, a seed and "
                            + mines + " mine tiles; it holds " + f.length + " fields");
                }
                int[] tiles = new int[mines];
                for (int i = 0; i < mines; i++) {
                    tiles[i] = Integer.parseInt(f[2 + i]);
                }
                games.add(new LayoutGameState(settings, Integer.parseInt(f[0]), Long.parseLong(f[1]), tiles, first));
            }
            if (in.readLine() != null) {
                throw new IllegalArgumentException(path + " holds more than its " + n + " games");
            }
            return games;
        }
    }

    private static String[] expect(BufferedReader in, String path, String key, int fields) throws IOException {
        String line = in.readLine();
        String[] f = line == null ? new String[0] : line.trim().split(" ");
        if (f.length != fields + 1 || !f[0].equals(key)) {
            throw new IllegalArgumentException(path + ": expected a line '" + key + "' with " + fields
                    + " field(s); got " + (line == null ? "the end of the file" : "'" + line + "'"));
        }
        String[] out = new String[fields];
        System.arraycopy(f, 1, out, 0, fields);
        return out;
    }
}
