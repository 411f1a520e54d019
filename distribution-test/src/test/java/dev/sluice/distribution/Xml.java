package dev.sluice.distribution;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.InputSource;
import org.xml.sax.SAXException;

/** The little DOM reading the distribution tests need: poms, Maven metadata and README snippets. */
final class Xml {
    private Xml() {}

    static Element parse(Path file) throws IOException {
        return parse(Files.readString(file), file.toString());
    }

    /** Parses {@code text}; {@code source} names it in the error when it is not well-formed XML. */
    static Element parse(String text, String source) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            return factory.newDocumentBuilder()
                    .parse(new InputSource(new StringReader(text)))
                    .getDocumentElement();
        } catch (ParserConfigurationException | SAXException | IOException e) {
            throw new AssertionError(source + " is not well-formed XML: " + e.getMessage() + "\n" + text, e);
        }
    }

    /** The direct children of {@code parent} named {@code name}. */
    static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                found.add(e);
            }
        }
        return found;
    }

    /** The element at {@code path} (child names) below {@code parent}, or null. */
    static Element child(Element parent, String... path) {
        Element at = parent;
        for (String name : path) {
            List<Element> next = children(at, name);
            if (next.isEmpty()) {
                return null;
            }
            at = next.get(0);
        }
        return at;
    }

    /** The trimmed text at {@code path} below {@code parent}, or null when there is no such element. */
    static String text(Element parent, String... path) {
        Element e = child(parent, path);
        return e == null ? null : e.getTextContent().trim();
    }

    /** Every element named {@code name} at any depth below {@code root}. */
    static List<Element> all(Element root, String name) {
        List<Element> found = new ArrayList<>();
        var list = root.getElementsByTagName(name);
        for (int i = 0; i < list.getLength(); i++) {
            found.add((Element) list.item(i));
        }
        return found;
    }
}
