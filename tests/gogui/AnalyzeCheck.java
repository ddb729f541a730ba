// Reads every entry of an engine's gogui-analyze_commands as GoGui 1.6 does: the answer through
// GoGui's GtpClient, the menu through AnalyzeDefinition, each board through GtpUtil's parser.
// Compiled by tests/test_gogui_client.py against gogui.jar; never shipped.
//
// usage: java -cp gogui.jar:DIR AnalyzeCheck "ENGINE COMMAND" SIZE [MOVE...]
// Prints one line per menu entry, `OK type label: what was read` or `FAIL type label: why`,
// and exits 1 when any entry failed.

import java.io.BufferedReader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import net.sf.gogui.go.GoColor;
import net.sf.gogui.go.GoPoint;
import net.sf.gogui.go.Move;
import net.sf.gogui.go.PointList;
import net.sf.gogui.gtp.AnalyzeCommand;
import net.sf.gogui.gtp.AnalyzeDefinition;
import net.sf.gogui.gtp.GtpClient;
import net.sf.gogui.gtp.GtpUtil;
import net.sf.gogui.gui.GuiBoardUtil;
import net.sf.gogui.util.StringUtil;

public final class AnalyzeCheck {
    // The drawing commands of a gfx answer that GoGui's AnalyzeShow.showGfxLine knows.
    private static final List<String> GFX = Arrays.asList("BLACK", "CIRCLE", "CLEAR", "COLOR",
        "INFLUENCE", "LABEL", "MARK", "SQUARE", "TEXT", "TRIANGLE", "VAR", "WHITE");

    public static void main(String[] args) throws Exception {
        String program = args[0];
        int size = Integer.parseInt(args[1]);
        GtpClient gtp = new GtpClient(program, null, false, null);
        gtp.send("boardsize " + size);
        gtp.send("clear_board");
        GoColor toMove = GoColor.BLACK;
        for (int i = 2; i < args.length; ++i) {
            gtp.send("play " + (toMove == GoColor.BLACK ? "b " : "w ") + args[i]);
            toMove = toMove.otherColor();
        }
        ArrayList<AnalyzeDefinition> menu =
            AnalyzeDefinition.read(null, null, gtp.send("gogui-analyze_commands"));
        boolean ok = true;
        for (AnalyzeDefinition def : menu) {
            String type = def.getType().toString().toLowerCase(Locale.ENGLISH);
            String line = type + " " + def.getLabel() + ": ";
            try {
                String command = new AnalyzeCommand(def).replaceWildCards(toMove);
                String response = gtp.send(command);
                System.out.println("OK " + line + read(def, response, size, toMove));
            } catch (Exception e) {
                ok = false;
                System.out.println("FAIL " + line + e);
            }
        }
        gtp.send("quit");
        gtp.close();
        gtp.waitForExit();
        System.exit(ok ? 0 : 1);
    }

    /** What GoGui's GUI would show of the answer; throws where it would not show it. */
    private static String read(AnalyzeDefinition def, String response, int size,
                               GoColor toMove) throws Exception {
        switch (def.getType()) {
        case DBOARD: {
            double[][] b = GtpUtil.parseDoubleBoard(response, size);
            rows(response, size);
            double min = Double.MAX_VALUE, max = -Double.MAX_VALUE, sum = 0;
            for (double[] column : b)
                for (double v : column) {
                    min = Math.min(min, v);
                    max = Math.max(max, v);
                    sum += v;
                }
            return String.format(Locale.ROOT, "min %.4f max %.4f sum %.4f", min, max, sum);
        }
        case CBOARD: {
            String[][] b = GtpUtil.parseStringBoard(response, size);
            rows(response, size);
            int coloured = 0;
            for (String[] column : b)
                for (String s : column)
                    if (!s.isEmpty()) {
                        if (GuiBoardUtil.getColor(s) == null)
                            throw new Exception("not a colour GoGui knows: '" + s + "'");
                        ++coloured;
                    }
            return "coloured " + coloured;
        }
        case SBOARD:
        case BWBOARD: {
            String[][] b = GtpUtil.parseStringBoard(response, size);
            rows(response, size);
            int labelled = 0;
            StringBuilder words = new StringBuilder();
            for (String[] column : b)
                for (String s : column)
                    if (!s.isEmpty()) {
                        ++labelled;
                        words.append(' ').append(s);
                    }
            return "labelled " + labelled + " words" + words;
        }
        case PSPAIRS: {
            PointList points = new PointList();
            ArrayList<String> strings = new ArrayList<String>();
            GtpUtil.parsePointStringList(response, points, strings, size);
            if (points.isEmpty())
                throw new Exception("no pairs");
            return "pairs " + points.size() + " first " + points.get(0) + " " + strings.get(0);
        }
        case VAR: {
            Move[] moves = variation(response, size, toMove);
            return "moves " + moves.length + " first " + moves[0];
        }
        case GFX:
            return gfx(response, size, toMove);
        case PLIST:
            return "points " + GtpUtil.parsePointList(response, size).size();
        default:
            return "not read (" + response.length() + " characters)";
        }
    }

    /** GtpUtil.parseStringBoard takes a row with extra words and reads only the first SIZE;
     *  an answer it reads must also have exactly SIZE rows of SIZE words, or a value was lost. */
    private static void rows(String response, int size) throws Exception {
        BufferedReader reader = new BufferedReader(new StringReader(response));
        int rows = 0;
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
            if (line.trim().isEmpty())
                continue;
            int words = StringUtil.splitArguments(line).length;
            if (words != size)
                throw new Exception("row " + (rows + 1) + " has " + words + " words");
            ++rows;
        }
        if (rows != size)
            throw new Exception(rows + " rows");
    }

    /** GtpUtil.parseVariation skips what is no point; here every word is a colour or a point. */
    private static Move[] variation(String text, int size, GoColor toMove) throws Exception {
        for (String word : StringUtil.splitArguments(text))
            if (!word.matches("(?i)b|w|black|white"))
                GtpUtil.parsePoint(word, size);
        Move[] moves = GtpUtil.parseVariation(text, toMove, size);
        if (moves.length == 0)
            throw new Exception("no moves");
        return moves;
    }

    /** Every line a drawing command of AnalyzeShow.showGfxLine, its points on the board. */
    private static String gfx(String response, int size, GoColor toMove) throws Exception {
        StringBuilder seen = new StringBuilder();
        BufferedReader reader = new BufferedReader(new StringReader(response));
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
            String[] a = StringUtil.splitArguments(line);
            if (a.length == 0)
                continue;
            String cmd = a[0].toUpperCase(Locale.ENGLISH);
            if (!GFX.contains(cmd))
                throw new Exception("unknown gfx command '" + a[0] + "'");
            seen.append(' ').append(cmd);
            if (cmd.equals("VAR")) {
                if (a.length < 3 || a.length % 2 == 0)
                    throw new Exception("VAR needs colour-point pairs: " + line);
                for (int i = 1; i < a.length; i += 2) {
                    if (!a[i].matches("(?i)b|w"))
                        throw new Exception("VAR colour '" + a[i] + "'");
                    GoPoint.parsePoint(a[i + 1], size);
                }
            } else if (cmd.equals("LABEL") || cmd.equals("INFLUENCE")) {
                if (a.length < 3 || a.length % 2 == 0)
                    throw new Exception(cmd + " needs point-value pairs: " + line);
                for (int i = 1; i < a.length; i += 2) {
                    if (GoPoint.parsePoint(a[i], size) == null)
                        throw new Exception(cmd + " on pass");
                    if (cmd.equals("INFLUENCE"))
                        Double.parseDouble(a[i + 1]);
                }
            } else if (!cmd.equals("TEXT") && !cmd.equals("CLEAR")) {
                for (int i = cmd.equals("COLOR") ? 2 : 1; i < a.length; ++i)
                    GoPoint.parsePoint(a[i], size);
            }
        }
        if (seen.length() == 0)
            throw new Exception("no drawing command");
        return "commands" + seen;
    }
}
